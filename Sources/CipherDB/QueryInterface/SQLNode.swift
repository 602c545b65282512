/// The SQL of an expression without its values: what every query of one shape shares.
///
/// Building an expression makes nodes and collects values; no SQL text is written. A database
/// renders the text once per shape (`StatementShapeCache`) and finds it again by the
/// node's precomputed hash and a structural comparison, so a query built per call costs no
/// string work after its first run.
///
/// Nodes are immutable, so they can be shared between threads and between queries.
final class SQLNode: Sendable {
    /// The kinds of node. Fields rather than an enum with payloads: shapes are compared on
    /// every run, and reading a stored field costs no copy of a payload.
    enum Kind: UInt8, Sendable {
        /// Finished ``text``: a quoted column, `?`, a raw fragment.
        case text
        /// `first text second` (`text` the operator), each operand parenthesized when compound.
        case binary
        /// ``text`` followed by `first`, parenthesized when compound (`NOT x`, `-x`).
        case prefix
        /// `first`, parenthesized when compound, followed by ``text`` (`x IS NULL`, `x DESC`).
        case suffix
        /// `text(argument, ...)`, the arguments as written.
        case call
    }

    let kind: Kind
    /// The text, operator, prefix, suffix or function name.
    let text: String
    /// The operand (the left one of a binary node).
    let first: SQLNode?
    /// The right operand of a binary node.
    let second: SQLNode?
    /// A call's arguments.
    let arguments: [SQLNode]
    /// Whether the text needs parentheses when it becomes an operand.
    let isCompound: Bool
    /// A hash of the shape, computed once: shapes are compared on every run of a query.
    let shapeHash: Int
    /// What the text needs of the running SQLite beyond 3.15 (an ordering's `NULLS FIRST`, a
    /// sub-query's needs), its operands' needs included: a statement that holds the node checks
    /// them before it runs.
    let requiredFeatures: Set<SQLiteFeature>

    private init(
        kind: Kind, text: String, first: SQLNode?, second: SQLNode?, arguments: [SQLNode], isCompound: Bool,
        requiredFeatures: Set<SQLiteFeature> = []
    ) {
        self.kind = kind
        self.text = text
        self.first = first
        self.second = second
        self.arguments = arguments
        self.isCompound = isCompound
        var features = requiredFeatures
        if let first, !first.requiredFeatures.isEmpty { features.formUnion(first.requiredFeatures) }
        if let second, !second.requiredFeatures.isEmpty { features.formUnion(second.requiredFeatures) }
        for argument in arguments where !argument.requiredFeatures.isEmpty { features.formUnion(argument.requiredFeatures) }
        self.requiredFeatures = features
        var hash = Self.mix(Int(kind.rawValue) << 1 | (isCompound ? 1 : 0), Self.hash(text))
        if let first { hash = Self.mix(hash, first.shapeHash) }
        if let second { hash = Self.mix(hash, second.shapeHash) }
        for argument in arguments { hash = Self.mix(hash, argument.shapeHash) }
        shapeHash = hash
    }

    /// Finished text as a node; `requiredFeatures` are what the text (a compiled sub-query)
    /// needs of the running SQLite.
    convenience init(text: String, isCompound: Bool = false, requiredFeatures: Set<SQLiteFeature> = []) {
        self.init(
            kind: .text, text: text, first: nil, second: nil, arguments: [], isCompound: isCompound, requiredFeatures: requiredFeatures)
    }

    /// `left op right`, compound.
    static func binary(_ op: String, _ left: SQLNode, _ right: SQLNode) -> SQLNode {
        SQLNode(kind: .binary, text: op, first: left, second: right, arguments: [], isCompound: true)
    }

    /// `prefix operand`, compound.
    static func prefix(_ prefix: String, _ operand: SQLNode) -> SQLNode {
        SQLNode(kind: .prefix, text: prefix, first: operand, second: nil, arguments: [], isCompound: true)
    }

    /// `operand suffix`; compound unless it is a term of a list (an ordering). `requiredFeatures`
    /// are what the suffix itself needs (`NULLS FIRST`).
    static func suffix(
        _ operand: SQLNode, _ suffix: String, isCompound: Bool, requiredFeatures: Set<SQLiteFeature> = []
    ) -> SQLNode {
        SQLNode(
            kind: .suffix, text: suffix, first: operand, second: nil, arguments: [], isCompound: isCompound,
            requiredFeatures: requiredFeatures)
    }

    /// `name(arguments...)`, not compound.
    static func call(_ name: String, _ arguments: [SQLNode]) -> SQLNode {
        SQLNode(kind: .call, text: name, first: nil, second: nil, arguments: arguments, isCompound: false)
    }

    /// `?`: the one placeholder node every bound value shares.
    static let placeholder = SQLNode(text: "?")

    // MARK: Text

    /// The SQL text.
    var sql: String {
        if kind == .text { return text }
        var sql = ""
        append(to: &sql)
        return sql
    }

    /// Appends the SQL text to `sql`.
    func append(to sql: inout String) {
        switch kind {
        case .text:
            sql += text
        case .binary:
            first?.appendOperand(to: &sql)
            sql += " "
            sql += text
            sql += " "
            second?.appendOperand(to: &sql)
        case .prefix:
            sql += text
            first?.appendOperand(to: &sql)
        case .suffix:
            first?.appendOperand(to: &sql)
            sql += text
        case .call:
            sql += text
            sql += "("
            for (index, argument) in arguments.enumerated() {
                if index > 0 { sql += ", " }
                argument.append(to: &sql)
            }
            sql += ")"
        }
    }

    /// Appends the text as an operand of a larger expression: parenthesized when compound.
    func appendOperand(to sql: inout String) {
        if isCompound {
            sql += "("
            append(to: &sql)
            sql += ")"
        } else {
            append(to: &sql)
        }
    }

    // MARK: Shape

    /// Whether `self` and `other` render the same text, decided without rendering.
    @inline(__always)
    func hasSameShape(as other: SQLNode) -> Bool {
        // The same node, the usual answer for a query built again per call, without a call.
        self === other || hasSameStructure(as: other)
    }

    /// ``hasSameShape(as:)`` for two distinct nodes: compared field by field.
    private func hasSameStructure(as other: SQLNode) -> Bool {
        // The needs too: a raw fragment may spell out a sub-query the builder wrote, without them,
        // and a shape's verdict on what it needs is cached with it.
        guard shapeHash == other.shapeHash, kind == other.kind, isCompound == other.isCompound, text == other.text,
            Self.same(first, other.first), Self.same(second, other.second), arguments.count == other.arguments.count,
            requiredFeatures == other.requiredFeatures
        else { return false }
        for index in arguments.indices where !arguments[index].hasSameShape(as: other.arguments[index]) {
            return false
        }
        return true
    }

    private static func same(_ node: SQLNode?, _ other: SQLNode?) -> Bool {
        guard let node else { return other == nil }
        guard let other else { return false }
        return node.hasSameShape(as: other)
    }

    /// FNV-1a over the text's bytes: cheap for the short texts nodes hold, and stable for one
    /// run of the process, which is all a cache of shapes needs.
    static func hash(_ text: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return Int(truncatingIfNeeded: hash)
    }

    /// Appends a well-mixed hash to a running one, keeping order (`a, b` and `b, a` differ):
    /// cheaper than ``mix(_:_:)``, for a sequence mixed once at its end.
    @inline(__always)
    static func fold(_ running: Int, _ value: Int) -> Int {
        (running &* 0x100_0000_01B3) ^ value
    }

    /// Combines two hashes (the mixing step of a 64-bit hash combiner).
    static func mix(_ seed: Int, _ value: Int) -> Int {
        var x = UInt64(bitPattern: Int64(seed)) ^ (UInt64(bitPattern: Int64(value)) &+ 0x9E37_79B9_7F4A_7C15)
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: x ^ (x >> 31))
    }
}
