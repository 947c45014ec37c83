#pragma once

#include <exception>

#include "base/result.h"

namespace webhookd::pg {

// What a libpqxx exception means to a caller: kUnavailable when the database or the
// connection failed (and `*discard` is set: the connection must not be reused),
// kInternal for anything else. The one place exceptions from the database become values.
Error ToError(const std::exception& e, bool* discard);

// The error for the exception being handled; call only inside a catch block.
Error CurrentError(bool* discard);

}  // namespace webhookd::pg
