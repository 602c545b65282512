// Swift's runtime alone: echoes each line of stdin.
import Glibc

while let line = readLine() {
    print(line)
    fflush(nil)  // stdout is a pipe: each answer goes out at once
}
