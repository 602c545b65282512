// The list of a connection's open result sets: what `close()` closes and
// `openResultSetCount` counts.
extension Database {
    /// Adds a result set that was just made to the list of open ones.
    ///
    /// The links are unmanaged references: an open result set keeps its database alive, not
    /// the other way round, and following a link costs no retain and release (each pair was
    /// about 40 instructions of a point lookup).
    @inline(__always)
    func register(_ resultSet: ResultSet) {
        let link = Unmanaged.passUnretained(resultSet)
        resultSet.nextOpen = firstOpenResultSet
        firstOpenResultSet?._withUnsafeGuaranteedRef { $0.previousOpen = link }
        firstOpenResultSet = link
        openResultSetCount += 1
    }

    /// Removes a result set that closes from the list of open ones.
    @inline(__always)
    func resultSetDidClose(_ resultSet: ResultSet) {
        let link = Unmanaged.passUnretained(resultSet)
        let next = resultSet.nextOpen
        if let previous = resultSet.previousOpen {
            previous._withUnsafeGuaranteedRef { $0.nextOpen = next }
        } else if firstOpenResultSet?.toOpaque() == link.toOpaque() {
            firstOpenResultSet = next
        } else {
            return  // not in the list
        }
        let previous = resultSet.previousOpen
        next?._withUnsafeGuaranteedRef { $0.previousOpen = previous }
        resultSet.previousOpen = nil
        resultSet.nextOpen = nil
        openResultSetCount -= 1
    }

    /// Closes every open result set.
    public func closeOpenResultSets() {
        while let link = firstOpenResultSet {
            let resultSet = link.takeUnretainedValue()
            resultSet.close()
            // close() unlinks it; unlink here too should it not have been linked through close.
            if firstOpenResultSet?.toOpaque() == link.toOpaque() { resultSetDidClose(resultSet) }
        }
    }
}
