// gzip (RFC 1952) through zlib: Foundation on Linux has no compression API.

import CZlib
import Foundation

/// A zlib call that failed while compressing.
package enum GzipError: Error, CustomStringConvertible {
    /// zlib returned `code` in `stage` (init, deflate, end, or a size check).
    case zlib(code: Int32, stage: String)

    /// The failure in words, for the command line.
    package var description: String {
        switch self {
        case .zlib(let code, let stage): return "zlib \(stage) failed with code \(code)"
        }
    }
}

/// gzip compression of whole buffers.
package enum Gzip {
    /// One gzip member holding `input`, compressed at zlib's best level
    /// (profiles are small and written once, so size beats speed).
    package static func compress(_ input: [UInt8]) throws -> Data {
        guard input.count < Int(UInt32.max) else { throw GzipError.zlib(code: Z_BUF_ERROR, stage: "input over 4 GiB") }
        var stream = z_stream()
        let initCode = hangwatch_deflate_init_gzip(&stream, Z_BEST_COMPRESSION)
        guard initCode == Z_OK else { throw GzipError.zlib(code: initCode, stage: "deflateInit2") }
        defer { deflateEnd(&stream) }
        // deflateBound covers the whole input plus zlib's framing, so one Z_FINISH call completes;
        // the extra bytes are for the gzip header and trailer, which deflateBound counts as zlib's.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        var source = input  // zlib's next_in is not const
        let code = source.withUnsafeMutableBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                stream.next_in = src.baseAddress
                stream.avail_in = uInt(src.count)
                stream.next_out = dst.baseAddress
                stream.avail_out = uInt(dst.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard code == Z_STREAM_END else { throw GzipError.zlib(code: code, stage: "deflate") }
        return Data(output.prefix(Int(stream.total_out)))
    }
}
