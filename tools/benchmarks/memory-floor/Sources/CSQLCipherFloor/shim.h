#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
