/// A unified-diff-like rendering of two texts line by line, for failure messages that must show
/// where a long text (a whole help screen) changed rather than print both texts whole.
enum LineDiff {
    /// The lines of `expected` and `actual` with `-` (only expected), `+` (only actual) and ` `
    /// (both), keeping `context` unchanged lines around each change and `…` for the lines left out.
    static func render(expected: String, actual: String, context: Int = 2) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let lines = edits(old, new)
        let changed = lines.indices.filter { lines[$0].mark != " " }
        var kept = Set<Int>()
        for index in changed { kept.formUnion(max(0, index - context)...min(lines.count - 1, index + context)) }
        var output = ["--- expected", "+++ actual"]
        var skipping = false
        for (index, line) in lines.enumerated() {
            if kept.contains(index) {
                output.append("\(line.mark)\(line.text)")
                skipping = false
            } else if !skipping {
                output.append("…")
                skipping = true
            }
        }
        return output.joined(separator: "\n")
    }

    /// The shortest edit from `old` to `new` by longest common subsequence (help screens are short).
    private static func edits(_ old: [String], _ new: [String]) -> [(mark: Character, text: String)] {
        var common = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                common[i][j] = old[i] == new[j] ? common[i + 1][j + 1] + 1 : max(common[i + 1][j], common[i][j + 1])
            }
        }
        var result: [(mark: Character, text: String)] = []
        var (i, j) = (0, 0)
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                result.append((" ", old[i]))
                (i, j) = (i + 1, j + 1)
            } else if i < old.count, j == new.count || common[i + 1][j] >= common[i][j + 1] {
                result.append(("-", old[i]))
                i += 1
            } else {
                result.append(("+", new[j]))
                j += 1
            }
        }
        return result
    }
}
