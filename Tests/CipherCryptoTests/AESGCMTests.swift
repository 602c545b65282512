import Testing

@testable import CipherCrypto

/// The GCM specification's test cases 13–16 (McGrew and Viega, 256-bit keys).
@Suite("AES-256-GCM known answers")
struct AESGCMTests {
    static let key15 = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
    static let iv15 = "cafebabefacedbaddecaf888"
    static let plaintext15 =
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
    static let ciphertext15 =
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"

    @Test(arguments: [
        // (key, iv, plaintext, aad, ciphertext, tag)
        (
            String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "", "",
            "530f8afbc74536b9a963b4f1c4cb738b"
        ),
        (
            String(repeating: "00", count: 32), String(repeating: "00", count: 12), String(repeating: "00", count: 16), "",
            "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"
        ),
        (key15, iv15, plaintext15, "", ciphertext15, "b094dac5d93471bdec1a502270e3cc6c"),
        (
            key15, iv15, String(plaintext15.dropLast(8)), "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            String(ciphertext15.dropLast(8)), "76fc6ece0f4e1768cddf8853bb2d551b"
        ),
    ])
    func specVectors(key: String, iv: String, plaintext: String, aad: String, ciphertext: String, tag: String) throws {
        let secretKey = SecretBytes(copying: hex(key))
        let box = try AESGCM.seal(
            SecretBytes(copying: hex(plaintext)), key: secretKey,
            associatedData: hex(aad), nonce: hex(iv))
        #expect(hexString(box.ciphertext) == ciphertext)
        #expect(hexString(box.tag) == tag)
        let opened = try AESGCM.open(box, key: secretKey, associatedData: hex(aad))
        #expect(opened.withUnsafeBytes { hexString($0) } == plaintext)
    }

    @Test func roundTripWithFreshNonces() throws {
        let key = try SecretBytes(randomCount: 32)
        let message = SecretBytes(utf8: "attack at dawn")
        let first = try AESGCM.seal(message, key: key, associatedData: [1, 2, 3])
        let second = try AESGCM.seal(message, key: key, associatedData: [1, 2, 3])
        #expect(first.nonce != second.nonce)
        #expect(first.ciphertext != second.ciphertext)
        let opened = try AESGCM.open(try AESGCM.SealedBox(combined: first.combined), key: key, associatedData: [1, 2, 3])
        #expect(opened.constantTimeEquals(message))
    }

    @Test func everyAlterationFailsAuthentication() throws {
        let key = try SecretBytes(randomCount: 32)
        let box = try AESGCM.seal(SecretBytes(utf8: "secret payload"), key: key, associatedData: [9, 9])
        let combined = box.combined
        for index in combined.indices {
            var altered = combined
            altered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(try AESGCM.SealedBox(combined: altered), key: key, associatedData: [9, 9])
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(box, key: key, associatedData: [9, 8])
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(box, key: try SecretBytes(randomCount: 32), associatedData: [9, 9])
        }
        #expect(throws: CryptoError.invalidParameter("key length")) {
            try AESGCM.open(box, key: SecretBytes(count: 16) { _ in }, associatedData: [9, 9])
        }
    }

    @Test func sha256KnownAnswer() throws {
        #expect(
            hexString(try SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
