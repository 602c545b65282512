import XCTest

@testable import CipherDB

/// The authorizer's refusals, read without a connection.
final class AuthorizerTests: XCTestCase {
    func testAttachNamesAKeyReadsOnlyBareWords() {
        XCTAssertTrue(Authorizer.attachNamesAKey("ATTACH 'a' AS b KEY 'c'"))
        XCTAssertTrue(Authorizer.attachNamesAKey("  attach\n'a'\tas b\nkey ?"))
        XCTAssertFalse(Authorizer.attachNamesAKey("ATTACH 'key' AS \"key\" -- KEY 'x'"))
        XCTAssertFalse(Authorizer.attachNamesAKey("ATTACH [key] AS `key` /* KEY 'x' */"))
        XCTAssertFalse(Authorizer.attachNamesAKey("SELECT key FROM t"))
        XCTAssertFalse(Authorizer.attachNamesAKey("ATTACH 'a' AS monkey"))
    }

    func testCipherSettingsAreRefusedOnlyWhenGivenAValue() {
        XCTAssertTrue(Authorizer.isRefusedPragma("cipher_page_size", setting: true))
        XCTAssertFalse(Authorizer.isRefusedPragma("cipher_page_size", setting: false))
        XCTAssertTrue(Authorizer.isRefusedPragma("kdf_iter", setting: true))
        XCTAssertTrue(Authorizer.isRefusedPragma("cipher_migrate", setting: false))
        XCTAssertTrue(Authorizer.isRefusedPragma("rekey", setting: true))
        XCTAssertFalse(Authorizer.isRefusedPragma("cipher_version", setting: false))
        XCTAssertFalse(Authorizer.isRefusedPragma("journal_mode", setting: true))
    }
}
