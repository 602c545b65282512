import CCurlShim
import CipherCrypto
import Foundation

/// The three Transit engine calls a slot needs (`encrypt`, `decrypt`, `rewrap`), over libcurl.
///
/// Request bodies that carry the master key are built in ``SecretBytes`` and sent from there;
/// answers land in a buffer the C shim wipes, and a decrypted key is decoded straight into
/// ``SecretBytes``.
struct TransitClient {
    let connection: TransitConnection

    /// Encrypts `plaintext` under `key`'s latest version.
    func encrypt(mount: String, key: String, plaintext: SecretBytes) throws(KeystoreError) -> (ciphertext: String, keyVersion: Int) {
        let body = Self.jsonBody(secretField: (name: "plaintext", value: plaintext), fields: [])
        let answer = try post(mount: mount, operation: "encrypt", key: key, body: body)
        return try Self.ciphertext(in: answer, context: context(of: "encrypt", mount: mount, key: key))
    }

    /// Decrypts a slot's ciphertext into a secret buffer.
    func decrypt(mount: String, key: String, ciphertext: String) throws(KeystoreError) -> SecretBytes {
        let body = Self.jsonBody(fields: [("ciphertext", ciphertext)])
        let answer = try post(mount: mount, operation: "decrypt", key: key, body: body)
        guard let plaintext = Self.secretField("plaintext", in: answer) else {
            // Never parsed as a whole (that would copy the key into memory no one wipes): an
            // answer that does not open as a JSON object is called not JSON.
            let isObject = answer.withUnsafeBytes { $0.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{") }
            throw Self.notUnderstood(context(of: "decrypt", mount: mount, key: key), isObject ? "no plaintext" : "not JSON")
        }
        return plaintext
    }

    /// Re-encrypts a ciphertext under the key's latest version without revealing it (`rewrap`).
    func rewrap(mount: String, key: String, ciphertext: String) throws(KeystoreError) -> (ciphertext: String, keyVersion: Int) {
        let body = Self.jsonBody(fields: [("ciphertext", ciphertext)])
        let answer = try post(mount: mount, operation: "rewrap", key: key, body: body)
        return try Self.ciphertext(in: answer, context: context(of: "rewrap", mount: mount, key: key))
    }

    /// How messages name a call: "decrypt with Transit key 'fleet' at https://bao:8200/v1/transit".
    private func context(of operation: String, mount: String, key: String) -> String {
        "\(operation) with Transit key '\(key)' at \(connection.address)/v1/\(mount)"
    }

    /// An answer no Transit engine sends: OpenBao and Vault answer JSON, so something else
    /// answered at the address (another service, a proxy's page).
    static func notUnderstood(_ context: String, _ what: String) -> KeystoreError {
        .transit(TransitError(.invalidResponse, "\(context): the answer was not understood (\(what)); is this an OpenBao or Vault server?"))
    }

    // MARK: HTTP

    /// Bytes of libcurl's own buffers wiped as libcurl freed them, for tests: its receive buffer
    /// held the service's answer (the master key) and its request buffer the token.
    static var wipedLibcurlBytes: UInt64 { UInt64(cdb_http_wiped_bytes()) }

    /// POSTs to `/v1/<mount>/<operation>/<key>` and returns the body of a 2xx answer, or throws
    /// the typed failure.
    private func post(mount: String, operation: String, key: String, body: SecretBytes) throws(KeystoreError) -> SecretBytes {
        let url = "\(connection.address)/v1/\(mount)/\(operation)/\(key)"
        let context = context(of: operation, mount: mount, key: key)
        var result = cdb_http_result()
        var response: UnsafeMutablePointer<UInt8>?
        var responseLength = 0
        let status = connection.token.withUnsafeBytes { token in
            body.withUnsafeBytes { bytes in
                cdb_http_post(
                    url, token.bindMemory(to: UInt8.self).baseAddress, token.count, connection.caFile,
                    bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, connection.timeout,
                    &result, &response, &responseLength)
            }
        }
        defer { cdb_http_free(response, responseLength) }
        guard status == 0 else { throw .transit(TransitError(.unavailable, "\(context): out of memory")) }
        let curlMessage = withUnsafeBytes(of: result.error) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        switch result.failure_class {
        case 0: break
        case 1: throw .transit(TransitError(.unavailable, "\(context): the service is unreachable (\(curlMessage))"))
        case 2: throw .transit(TransitError(.tls, "\(context): TLS failed (\(curlMessage)); check BAO_CACERT or VAULT_CACERT"))
        default: throw .transit(TransitError(.unavailable, "\(context): the request failed (\(curlMessage))"))
        }
        let answer = SecretBytes(count: responseLength) { buffer in
            if let response, responseLength > 0 { buffer.baseAddress?.copyMemory(from: response, byteCount: responseLength) }
        }
        let code = result.status
        if (200..<300).contains(code) { return answer }
        // A gateway's 502, 503 or 504 is the service out of reach whatever its page says;
        // any other error answer that is not JSON did not come from a Transit engine.
        guard let reason = Self.errors(in: answer) else {
            if [502, 503, 504].contains(code) { throw .transit(TransitError(.unavailable, "\(context): HTTP \(code)")) }
            throw Self.notUnderstood(context, "HTTP \(code), not JSON")
        }
        let message = "\(context): HTTP \(code)\(reason.isEmpty ? "" : ": " + reason)"
        let lowered = reason.lowercased()
        switch code {
        case 401, 403:
            throw .transit(TransitError(.permissionDenied, message))
        case 404:
            throw .transit(TransitError(.keyNotFound, message))
        case 400 where lowered.contains("too old"):
            throw .transit(TransitError(.ciphertextTooOld, message))
        case 400 where lowered.contains("not found"):
            throw .transit(TransitError(.keyNotFound, message))
        case 500...599:
            throw .transit(TransitError(.unavailable, message))
        default:
            throw .transit(TransitError(.rejected, message))
        }
    }

    // MARK: JSON

    /// `{"<secret field>":"<base64>","<name>":"<value>",…}` in a secret buffer. Values are
    /// base64 or Transit ciphertexts, which need no escaping.
    static func jsonBody(secretField: (name: String, value: SecretBytes)? = nil, fields: [(String, String)]) -> SecretBytes {
        var members = fields.map { "\"\($0.0)\":\"\($0.1)\"" }
        guard let secretField else { return SecretBytes(copying: Array("{\(members.joined(separator: ","))}".utf8)) }
        members.insert("", at: 0)
        let prefix = Array("{\"\(secretField.name)\":\"".utf8)
        let suffix = Array("\"\(members.joined(separator: ","))}".utf8)
        let encodedLength = SecretBase64.encodedLength(secretField.value.count)
        return SecretBytes(count: prefix.count + encodedLength + suffix.count) { buffer in
            buffer.copyBytes(from: prefix)
            secretField.value.withUnsafeBytes { source in
                SecretBase64.encode(
                    source, into: UnsafeMutableRawBufferPointer(rebasing: buffer[prefix.count..<(prefix.count + encodedLength)]))
            }
            UnsafeMutableRawBufferPointer(rebasing: buffer[(prefix.count + encodedLength)...]).copyBytes(from: suffix)
        }
    }

    /// Decodes the base64 string value of `"name"` straight from the answer's bytes.
    static func secretField(_ name: String, in answer: SecretBytes) -> SecretBytes? {
        let needle = Array("\"\(name)\":\"".utf8)
        return answer.withUnsafeBytes { bytes -> SecretBytes? in
            guard bytes.count >= needle.count else { return nil }
            for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
                guard bytes[start..<(start + needle.count)].elementsEqual(needle) else { continue }
                let valueStart = start + needle.count
                guard let end = bytes[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return SecretBase64.decode(UnsafeRawBufferPointer(rebasing: bytes[valueStart..<end]))
            }
            return nil
        }
    }

    /// The `data.ciphertext` and `data.key_version` of an encrypt or rewrap answer (no secret).
    ///
    /// - Parameter context: how messages name the call.
    static func ciphertext(in answer: SecretBytes, context: String) throws(KeystoreError) -> (ciphertext: String, keyVersion: Int) {
        guard let object = answer.withUnsafeBytes({ try? JSONSerialization.jsonObject(with: Data($0)) }) as? [String: Any] else {
            throw notUnderstood(context, "not JSON")
        }
        guard let data = object["data"] as? [String: Any], let ciphertext = data["ciphertext"] as? String,
            let version = TransitSlot.keyVersion(ofCiphertext: ciphertext)
        else {
            throw notUnderstood(context, "no ciphertext")
        }
        return (ciphertext, version)
    }

    /// The `errors` of an error answer, joined (Vault and OpenBao put their reasons there): empty
    /// when a JSON object has none, `nil` when the answer is not a JSON object.
    static func errors(in answer: SecretBytes) -> String? {
        guard let object = answer.withUnsafeBytes({ try? JSONSerialization.jsonObject(with: Data($0)) }) as? [String: Any] else {
            return nil
        }
        return (object["errors"] as? [String])?.joined(separator: "; ") ?? ""
    }
}
