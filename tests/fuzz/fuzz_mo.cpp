// translate::parse_mo (the translate example's gettext .mo reader) on arbitrary bytes:
// it returns or throws ag::IOError, and never reads outside the input (ASan sees the
// input as a buffer of exactly `size` bytes). An accepted catalog's strings are all
// read once so that a string pointing past the input is caught, and must not add up to
// more bytes than the input (a decompression bomb).
#include "mo.h"

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy in its own heap block: ASan then reports any read one byte past the end.
  std::string bytes(reinterpret_cast<const char*>(data), size);
  translate::MoCatalog cat;
  bool ok = false;
  try {
    cat = translate::parse_mo(bytes, "fuzz.mo");
    ok = true;
  } catch (const ag::IOError&) {
  } catch (const std::exception& e) {
    fuzz::fail(std::string("parse_mo threw ") + typeid(e).name() + " (not an ag::IOError): " + e.what());
  }
  if (!ok) return 0;
  size_t chars = cat.header.size();
  for (const translate::MoEntry& e : cat.entries) {
    if (e.msgstrs.empty()) fuzz::fail("parse_mo returned an entry without a translation");
    chars += e.context.size() + e.msgid.size() + e.msgid_plural.size();
    for (const std::string& s : e.msgstrs) chars += s.size();
  }
  // Strings cannot add up to more than the input: entries sharing one string range
  // expanded 3.2 MB into ~200 GB (issue 23).
  if (chars > size)
    fuzz::fail("parse_mo returned " + std::to_string(chars) + " bytes of strings from " + std::to_string(size) +
               " bytes of input");
  (void)translate::header_charset(cat.header);
  return 0;
}
