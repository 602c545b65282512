/// The values bound to an expression's `?`s, in order: none, one kept inline, or several.
///
/// Most expressions bind no value or one (`id == ?`): kept inline, a query built per call
/// allocates no array for its comparison's value and frees none.
enum SQLArguments: Sendable {
    case none
    case one(SQLArgument)
    /// Two or more.
    case many([SQLArgument])

    /// The values of `array`, inline when there is one.
    init(_ array: [SQLArgument]) {
        switch array.count {
        case 0: self = .none
        case 1: self = .one(array[0])
        default: self = .many(array)
        }
    }

    /// These values followed by `other`'s.
    static func + (values: SQLArguments, other: SQLArguments) -> SQLArguments {
        switch (values, other) {
        case (.none, _): return other
        case (_, .none): return values
        default: return .many(Array(values) + Array(other))
        }
    }

    /// Calls `body` with each value, in order, reading them in place.
    @inline(__always)
    func forEachValue<E: Error>(_ body: (SQLArgument) throws(E) -> Void) throws(E) {
        switch self {
        case .none: return
        case .one(let value): try body(value)
        case .many(let values): for value in values { try body(value) }
        }
    }
}

extension SQLArguments: RandomAccessCollection {
    var startIndex: Int { 0 }

    var endIndex: Int {
        switch self {
        case .none: return 0
        case .one: return 1
        case .many(let values): return values.count
        }
    }

    subscript(position: Int) -> SQLArgument {
        switch self {
        case .one(let value) where position == 0: return value
        case .many(let values): return values[position]
        default: preconditionFailure("index \(position) out of range")
        }
    }
}

extension SQLArguments: ExpressibleByArrayLiteral {
    init(arrayLiteral values: SQLArgument...) { self.init(values) }
}
