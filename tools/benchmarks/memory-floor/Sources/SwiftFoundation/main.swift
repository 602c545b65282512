// Swift with Foundation in use (a URL, a Data, a Date): echoes each line of stdin.
import Foundation

let url = URL(fileURLWithPath: CommandLine.arguments.last ?? "/")
let data = (try? Data(contentsOf: url)) ?? Data()
while let line = readLine() {
    print(line, data.count, Date().timeIntervalSince1970 > 0)
    fflush(nil)  // stdout is a pipe: each answer goes out at once
}
