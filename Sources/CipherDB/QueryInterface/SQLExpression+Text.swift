/// `left || right`: text concatenation (NULL if either is NULL).
public func + <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<L.Value>
where L.Value == R.Value, L.Value.Unwrapped == String {
    .binary("||", left, right)
}

/// `left || right` for text of which one side is optional: NULL if either is NULL.
public func + <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<String?>
where L.Value.Unwrapped == String, R.Value.Unwrapped == String {
    .binary("||", left, right)
}

/// `left || ?` with `right` bound.
public func + <L: TypedSQLExpressible>(left: L, right: String) -> SQLExpression<L.Value> where L.Value.Unwrapped == String {
    .binary("||", left, value: right)
}

extension TypedSQLExpressible where Value.Unwrapped == String {
    /// `self LIKE ?` (ASCII case-insensitive in SQLite), with `escape` as the `ESCAPE` character.
    ///
    /// ```swift
    /// users.filter(email.like("%@example.com"))
    /// ```
    ///
    /// SQLite takes one code point as the escape: a `Character` of several (a letter with a
    /// combining accent, an emoji with a modifier) makes the statement fail when it runs.
    public func like(_ pattern: String, escape: Character? = nil) -> SQLExpression<Bool> {
        guard let escape else { return .binary("LIKE", self, value: pattern) }
        return SQLExpression(
            sql: operandSQL + " LIKE ? ESCAPE ?", bindings: bindings + SQLArguments([SQLArgument(pattern), .value(.text(String(escape)))]),
            isCompound: true, requiredFeatures: requiredFeatures)
    }

    /// `self GLOB ?` (case-sensitive, Unix wildcards).
    public func glob(_ pattern: String) -> SQLExpression<Bool> {
        .binary("GLOB", self, value: pattern)
    }

    /// `lower(self)`: ASCII letters lowercased, as SQLite's `lower` does.
    public var lowercased: SQLExpression<Value> { .function("lower", [sqlExpression]) }

    /// `upper(self)`: ASCII letters uppercased, as SQLite's `upper` does.
    public var uppercased: SQLExpression<Value> { .function("upper", [sqlExpression]) }
}

extension TypedSQLExpressible {
    /// The expression compared and sorted by the collation `name` (`NOCASE`, `RTRIM`, or one
    /// made with `Database.createCollation`): `"name" COLLATE "NOCASE"`.
    ///
    /// ```swift
    /// users.filter(email.collating("NOCASE") == "A@X").order(name.collating("localized"))
    /// ```
    public func collating(_ name: String) -> SQLExpression<Value> {
        SQLExpression(
            sql: operandSQL + " COLLATE " + quoteIdentifier(name), bindings: bindings, isCompound: true, requiredFeatures: requiredFeatures)
    }
}
