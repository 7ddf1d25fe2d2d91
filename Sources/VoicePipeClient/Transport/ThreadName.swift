import CWebSockets

/// Names the calling thread as the operating system shows it (`/proc/self/task/*/comm`, `top -H`,
/// a debugger): at most 15 bytes show. Foundation's `Thread.name` does not reach the system on Linux.
public func nameCurrentThread(_ name: String) {
    _ = voicepipe_name_this_thread(name)
}
