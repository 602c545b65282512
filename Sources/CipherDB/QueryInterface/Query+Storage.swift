extension Query {
    /// What a query's box holds besides its expressions.
    struct Header {
        let source: Source
        /// The result columns come first among the expressions (none for `*`), the filters after.
        var selectionCount = 0
        var filterCount = 0
        /// How many expressions the box has room for.
        var capacity: Int
        var orderings: [SQLOrdering] = []
        var limitCount: Int?
        /// The parts most queries do not use, in a box of their own.
        var rare: RareParts.Box?
    }

    /// The parts, in one allocation: the header, then the result columns and the filters.
    ///
    /// A building step copies one reference and changes the box in place when it holds the only
    /// one (builder methods consume the query they refine); a copy with a shared box copies the
    /// box first, so a query is still a value. One allocation per query built: arrays of one
    /// column and one filter cost two more, and each array's generic destruction.
    ///
    /// Not `Sendable` (`ManagedBuffer` cannot be): a query shares its box across threads as
    /// `nonisolated(unsafe)`, safe because a box is changed only through `Query.unique(room:)`,
    /// when one query holds it.
    final class Storage: ManagedBuffer<Header, SQLExpression<Void>> {

        /// A box with room for `capacity` expressions.
        static func make(_ header: Header) -> Storage {
            unsafeDowncast(Storage.create(minimumCapacity: header.capacity) { _ in header }, to: Storage.self)
        }

        deinit {
            _ = withUnsafeMutablePointers { header, expressions in
                expressions.deinitialize(count: header.pointee.selectionCount + header.pointee.filterCount)
            }
        }

        /// The header, read and changed in place through its address: the `header` property
        /// checks exclusivity at run time on every access (about 45 instructions each, several a
        /// query). Valid while the box is alive, which whoever asks keeps it.
        @inline(__always) var head: UnsafeMutablePointer<Header> { withUnsafeMutablePointerToHeader { $0 } }

        var count: Int { head.pointee.selectionCount + head.pointee.filterCount }

        /// A box with room for `capacity` expressions holding copies of these.
        func copied(capacity: Int) -> Storage {
            let box = withHeader(capacity: capacity)
            withUnsafeMutablePointerToElements { expressions in
                box.withUnsafeMutablePointerToElements { $0.initialize(from: expressions, count: count) }
            }
            return box
        }

        /// A box with room for `capacity` expressions, these moved into it (this one is left empty).
        func moved(capacity: Int) -> Storage {
            let box = withHeader(capacity: capacity)
            withUnsafeMutablePointerToElements { expressions in
                box.withUnsafeMutablePointerToElements { $0.moveInitialize(from: expressions, count: count) }
            }
            head.pointee.selectionCount = 0
            head.pointee.filterCount = 0
            return box
        }

        /// A box with this one's header and room for `capacity` expressions, none there yet
        /// (its counts are this one's: fill it before it is used or released).
        private func withHeader(capacity: Int) -> Storage {
            var header = head.pointee
            header.capacity = capacity
            return Storage.make(header)
        }

        /// The result columns, copied out.
        var selection: [SQLExpression<Void>] {
            withUnsafeMutablePointers { header, expressions in
                Array(UnsafeBufferPointer(start: expressions, count: header.pointee.selectionCount))
            }
        }

        /// The filters, copied out.
        var filters: [SQLExpression<Void>] {
            withUnsafeMutablePointers { header, expressions in
                Array(UnsafeBufferPointer(start: expressions + header.pointee.selectionCount, count: header.pointee.filterCount))
            }
        }
    }

    /// The box, copied first if another query shares it, with room for `room` more expressions.
    mutating func unique(room: Int = 0) -> Storage {
        let needed = storage.count + room
        if isKnownUniquelyReferenced(&storage) {
            if needed > storage.head.pointee.capacity { storage = storage.moved(capacity: max(needed, storage.head.pointee.capacity * 2)) }
        } else {
            storage = storage.copied(capacity: max(needed, storage.head.pointee.capacity))
        }
        return storage
    }

    /// Appends a filter (ANDed with the others).
    @usableFromInline
    mutating func appendFilter(_ filter: SQLExpression<Void>) {
        unique(room: 1).withUnsafeMutablePointers { header, expressions in
            (expressions + header.pointee.selectionCount + header.pointee.filterCount).initialize(to: filter)
            header.pointee.filterCount += 1
        }
    }

    /// Appends a result column.
    @usableFromInline
    mutating func appendSelection(_ column: SQLExpression<Void>) {
        unique(room: 1).withUnsafeMutablePointers { header, expressions in
            let end = expressions + header.pointee.selectionCount
            // The filters move one place up to make room (the regions overlap: moved from the top).
            (end + 1).moveInitialize(from: end, count: header.pointee.filterCount)
            end.initialize(to: column)
            header.pointee.selectionCount += 1
        }
    }

    /// Removes the result columns (`*`).
    @usableFromInline
    mutating func removeSelection() {
        guard storage.head.pointee.selectionCount > 0 else { return }
        unique().withUnsafeMutablePointers { header, expressions in
            let count = header.pointee.selectionCount
            expressions.deinitialize(count: count)
            expressions.moveInitialize(from: expressions + count, count: header.pointee.filterCount)
            header.pointee.selectionCount = 0
        }
    }

    /// Removes the filters.
    mutating func removeFilters() {
        guard storage.head.pointee.filterCount > 0 else { return }
        unique().withUnsafeMutablePointers { header, expressions in
            (expressions + header.pointee.selectionCount).deinitialize(count: header.pointee.filterCount)
            header.pointee.filterCount = 0
        }
    }
}
