// What `import HangWatch` brings: the library's own types (HangWatcher,
// FrameMonitor, LoopHeartbeat) and, re-exported from the stages below, what
// a user of them needs: the report model, the watcher's configuration and the
// output formats. The stages' other declarations are `package`: they serve
// the `hangwatch` tool and the tests, and are not part of the public API.

@_exported import HangWatchModel
@_exported import struct HangWatchCapture.CaptureConfig
@_exported import enum HangWatchRender.ReportFormat
@_exported import enum HangWatchRender.ReportRenderError
