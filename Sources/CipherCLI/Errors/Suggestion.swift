/// "Did you mean ...?" for a mistyped command or dot-command.
enum Suggestion {
    /// The candidate closest to `word`, if it is at most two edits away (a typo, not another word).
    static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2, best.1 < word.count else { return nil }
        return best.0
    }

    /// Levenshtein distance: insertions, deletions and substitutions of characters.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let (a, b) = (Array(lhs), Array(rhs))
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
