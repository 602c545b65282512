import CipherCrypto
import Foundation
import Testing

@testable import CipherKeystore

/// The Transit slot's encoding and the secret base64 it sends, without a server.
@Suite("Transit slot format")
struct TransitSlotFormatTests {
    @Test func secretBase64MatchesFoundation() throws {
        for length in 0..<70 {
            let bytes = try SecureRandom.bytes(count: length)
            let secret = SecretBytes(copying: bytes)
            let encoded = SecretBytes(count: SecretBase64.encodedLength(length)) { output in
                secret.withUnsafeBytes { SecretBase64.encode($0, into: output) }
            }
            let text = encoded.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            #expect(text == Data(bytes).base64EncodedString())
            let decoded = try #require(encoded.withUnsafeBytes { SecretBase64.decode($0) })
            #expect(decoded.withUnsafeBytes { Array($0) } == bytes)
        }
        for bad in ["abc", "ab=c", "a\"bc", "====", "ab c"] {
            #expect(Array(bad.utf8).withUnsafeBytes { SecretBase64.decode($0) } == nil, "\(bad)")
        }
    }

    @Test func jsonBodiesCarryTheSecretOnlyAsBase64() throws {
        let body = TransitClient.jsonBody(secretField: (name: "plaintext", value: SecretBytes(copying: [0, 1, 2, 255])), fields: [])
        #expect(body.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == #"{"plaintext":"AAEC/w=="}"#)
        let plain = TransitClient.jsonBody(fields: [("ciphertext", "vault:v1:abc")])
        #expect(plain.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == #"{"ciphertext":"vault:v1:abc"}"#)
        let answer = SecretBytes(copying: Array(#"{"request_id":"x","data":{"plaintext":"AAEC/w=="}}"#.utf8))
        #expect(TransitClient.secretField("plaintext", in: answer)?.withUnsafeBytes { Array($0) } == [0, 1, 2, 255])
    }

    @Test func payloadsRoundTripAndCraftedOnesAreRefused() throws {
        let slot = TransitSlot(mount: "kms/transit", key: "fleet", keyVersion: 3, ciphertext: "vault:v3:QUJD")
        var writer = ByteWriter()
        slot.encode(into: &writer)
        #expect(try TransitSlot.decode(writer.bytes) == slot)
        #expect(throws: KeystoreError.self) { try TransitSlot.decode(writer.bytes + [0]) }
        for cut in 0..<writer.bytes.count {
            #expect(throws: KeystoreError.self) { try TransitSlot.decode(Array(writer.bytes[..<cut])) }
        }
        for (mount, key, version, ciphertext) in [
            ("../sys", "k", UInt32(1), "vault:v1:QQ=="), ("transit", "a/b", 1, "vault:v1:QQ=="),
            ("transit", "k", 2, "vault:v1:QQ=="), ("transit", "k", 1, "v1:QQ=="), ("transit", "k", 1, "vault:v1:\"x"),
        ] {
            var crafted = ByteWriter()
            TransitSlot(mount: mount, key: key, keyVersion: version, ciphertext: ciphertext).encode(into: &crafted)
            #expect(throws: KeystoreError.self, "\(mount) \(key) \(version) \(ciphertext)") { try TransitSlot.decode(crafted.bytes) }
        }
    }

    /// An address with credentials in it is refused, and the refusal quoted the whole address:
    /// a password or token in it reached stderr and CI logs.
    @Test func anAddressWithCredentialsIsRefusedWithoutQuotingThem() throws {
        let token = SecretBytes(utf8: "s.token")
        for address in [
            "https://ops:Pa55word@bao.example:8200", "https://bao.example:8200/?token=hvs.SECRETTOKEN",
            "https://bao.example/#hvs.SECRETTOKEN",
            "https://hvs.SECRETTOKEN@bao.example",
        ] {
            #expect {
                try TransitConnection(address: address, token: token)
            } throws: { error in
                let message = (error as? KeystoreError)?.description ?? ""
                return message.contains("without credentials") && !message.contains("Pa55word") && !message.contains("SECRETTOKEN")
                    && message.contains("bao.example")
            }
        }
    }

    /// The token (and, at enrolment and rotation, the master key) never crosses a network in
    /// clear: plain http:// is refused when the connection is made, before any request, unless
    /// the host is this machine's loopback.
    @Test func plainHTTPIsRefusedUnlessTheHostIsLoopback() throws {
        let token = SecretBytes(utf8: "s.token")
        for address in [
            "http://bao.example:8200", "http://10.0.0.5:8200", "http://bao.example", "http://127.0.0.1.nip.io:8200",
            "http://localhost.example:8200", "http://[::2]:8200", "http://127.0.0.2:8200", "http://127.0.0.1:80x",
            "http://[::1]x:8200", "http://:8200",
        ] {
            #expect(throws: KeystoreError.plaintextTransitAddress(address), "\(address)") {
                try TransitConnection(address: address, token: token)
            }
            let message = KeystoreError.plaintextTransitAddress(address).description
            #expect(message.contains("https://") && message.contains("loopback") && !message.contains("s.token"), "\(message)")
        }
        for address in [
            "https://bao.example:8200", "https://10.0.0.5", "http://127.0.0.1:8200", "http://localhost:8200", "http://LocalHost",
            "http://[::1]:8200", "http://[::1]", "http://127.0.0.1/", "http://localhost:8200/prefix",
        ] {
            #expect(throws: Never.self, "\(address)") { try TransitConnection(address: address, token: token) }
        }
    }
}
