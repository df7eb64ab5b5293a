import CHangWatchEngine
import CoreFoundation

/// The heartbeat of a RunLoop program from inside: a CFRunLoop observer on the
/// main run loop marks "before waiting" (the busy period ends) and "after
/// waiting" (a new one starts), in all common modes.
enum MainRunLoopHeartbeat {
    static func install() {
        // The engine registered the main thread as it started, unless a thread
        // list (HANGWATCH_THREADS) leaves "main" out: then it is not watched.
        guard let slot = hw_current_slot() else { return }
        let address = UInt(bitPattern: slot)
        let activities = CFRunLoopActivity.beforeWaiting.rawValue | CFRunLoopActivity.afterWaiting.rawValue
        let observer = CFRunLoopObserverCreateWithHandler(nil, activities, true, 0) { _, activity in
            guard let slot = OpaquePointer(bitPattern: address) else { return }
            if activity == .beforeWaiting { hw_heartbeat_wait_begin(slot) } else { hw_heartbeat_wait_end(slot) }
        }
        CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
    }
}
