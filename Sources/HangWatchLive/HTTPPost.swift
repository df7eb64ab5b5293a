import Glibc

/// A plain-HTTP POST, enough for an OTLP/HTTP receiver on the local network:
/// one request per connection, no TLS, no redirects, every step bounded by a
/// timeout. Runs on hangwatch's exporter thread, never on a watched thread.
package struct HTTPPost {
    /// An `http://host:port/path` endpoint.
    package struct Endpoint: Sendable, Equatable {
        package var host: String
        package var port: UInt16
        package var path: String

        /// Parses `http://HOST[:PORT][/PATH]`; nil for anything else (https included).
        package init?(_ url: String, defaultPath: String) {
            guard url.hasPrefix("http://") else { return nil }
            let rest = url.dropFirst("http://".count)
            let authority = rest.prefix { $0 != "/" }
            let path = rest.dropFirst(authority.count)
            let hostPart: Substring
            if let colon = authority.lastIndex(of: ":") {
                guard let port = UInt16(authority[authority.index(after: colon)...]), port > 0 else { return nil }
                self.port = port
                hostPart = authority[..<colon]
            } else {
                port = 80
                hostPart = authority
            }
            guard !hostPart.isEmpty else { return nil }
            host = String(hostPart)
            let trimmed = path.hasSuffix("/") ? path.dropLast() : path
            self.path = trimmed.isEmpty ? defaultPath : String(trimmed)
        }
    }

    /// Why a POST did not get a 2xx answer.
    package enum Failure: Error, Equatable {
        /// No connection: refused, unreachable, unknown host, timed out.
        case unreachable(String)
        /// The server answered with this status.
        case status(Int)
        /// The answer was not HTTP.
        case badAnswer
    }

    package var endpoint: Endpoint
    /// Connect, send and receive timeout, each.
    package var timeoutMs = 2000

    package init(endpoint: Endpoint) { self.endpoint = endpoint }

    /// Sends `body`; returns when a 2xx status came back, throws otherwise.
    package func send(_ body: [UInt8], contentType: String) throws(Failure) {
        let fd = try connect()
        defer { close(fd) }
        let head = "POST \(endpoint.path) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\n"
            + "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard writeAll(fd, Array(head.utf8) + body) else { throw .unreachable(String(cString: strerror(errno))) }
        let status = try readStatus(fd)
        guard (200..<300).contains(status) else { throw .status(status) }
    }

    private func connect() throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list) == 0, let first = list else {
            throw .unreachable("cannot resolve \(endpoint.host)")
        }
        defer { freeaddrinfo(list) }
        var why = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // SO_SNDTIMEO bounds connect(2) too on Linux.
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            why = String(cString: strerror(errno))
            close(fd)
        }
        throw .unreachable(why)
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// The status code of the answer's first line ("HTTP/1.1 200 OK").
    private func readStatus(_ fd: Int32) throws(Failure) -> Int {
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !answer.contains(0x0A) && answer.count < 4096 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            answer += chunk[..<n]
        }
        let line = String(decoding: answer.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw answer.isEmpty ? .unreachable("no answer") : .badAnswer
        }
        return status
    }
}
