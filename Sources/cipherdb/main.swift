import CipherCLI

CipherDBTool.main()
