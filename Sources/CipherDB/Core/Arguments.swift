/// The values bound to a statement's parameters: by position or by name.
///
/// Positional arguments fill `?`, `?NNN`, `:name`, `@name` and `$name` parameters in order; named
/// arguments fill `:name`, `@name` and `$name` parameters and may be written with or without the
/// prefix. A count that does not match, a name the statement lacks, or a parameter left without a
/// value is an error: a missing value is never silently bound as NULL.
///
/// ```swift
/// try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", arguments: [1, "x"])
/// try db.executeUpdate("UPDATE t SET b = :b WHERE a = :a", ["a": 1, "b": "y"])
/// ```
public enum StatementArguments {
    /// Values in parameter order.
    case positional([Bindable?])
    /// Values by parameter name.
    case named([String: Bindable?])

    /// No arguments.
    public static var none: StatementArguments { .positional([]) }

    /// Whether no values are given.
    var isEmpty: Bool {
        switch self {
        case .positional(let values): return values.isEmpty
        case .named(let values): return values.isEmpty
        }
    }
}

extension StatementArguments: ExpressibleByArrayLiteral {
    /// Positional arguments from an array literal.
    public init(arrayLiteral elements: Bindable?...) {
        self = .positional(elements)
    }
}

extension StatementArguments: ExpressibleByDictionaryLiteral {
    /// Named arguments from a dictionary literal.
    public init(dictionaryLiteral elements: (String, Bindable?)...) {
        var values: [String: Bindable?] = [:]
        for (name, value) in elements { values[name] = value }
        self = .named(values)
    }
}

/// Strips a leading `:`, `@` or `$` from a parameter name.
@inline(__always)
func bareParameterName(_ name: String) -> Substring {
    if let first = name.utf8.first, first == UInt8(ascii: ":") || first == UInt8(ascii: "@") || first == UInt8(ascii: "$") {
        return name.dropFirst()
    }
    return Substring(name)
}
