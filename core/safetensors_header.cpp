// safetensors header parsing and validation: the JSON header -> the tensors' entries,
// each checked against the real data buffer before anything is allocated, and
// __metadata__. Every error is an IOError naming the file (Reader::fail).
#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "safetensors_internal.h"

namespace ag::safetensors_detail {

namespace {

// A SAX handler that only watches the keys of the top-level object, for the first one
// that appears twice; a syntax error is left to json::parse, which reports it.
struct DuplicateKeys : nlohmann::json_sax<json> {
  int depth = 0;
  std::unordered_set<std::string> seen;
  std::string duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth, true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool key(string_t& k) override {
    if (depth == 1 && duplicate.empty() && !seen.insert(k).second) duplicate = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

uint64_t Reader::to_u64(const json& v, const std::string& what) const {
  if (!v.is_number_unsigned()) fail(what, " must be a non-negative integer, got ", describe(v));
  return v.get<uint64_t>();
}

Reader::Entry Reader::parse_entry(const std::string& name, const json& info, uint64_t data_size) const {
  const std::string tn = "tensor " + squoted(name);
  if (name.empty()) fail("a tensor has an empty name");
  if (!info.is_object()) fail(tn, ": expected an object with dtype, shape and data_offsets, got ", describe(info));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!info.contains(key)) fail(tn, ": missing \"", key, "\"");

  Entry e{name, DType::f32, {}, 0, 0};
  const json& dt = info["dtype"];
  if (!dt.is_string()) fail(tn, ": dtype must be a string, got ", describe(dt));
  auto it = std::find_if(std::begin(kDTypeNames), std::end(kDTypeNames),
                         [&](const DTypeName& d) { return dt.get<std::string>() == d.name; });
  if (it == std::end(kDTypeNames))
    fail(tn, ": unsupported dtype ", squoted(dt.get<std::string>()),
         " (attograd reads F32, F64, I32, I64, BOOL, BF16, F16, I8, U8)");
  e.dtype = it->dtype;

  const json& sh = info["shape"];
  if (!sh.is_array()) fail(tn, ": shape must be an array of non-negative integers, got ", describe(sh));
  if (sh.size() > size_t(kMaxDims)) fail(tn, ": shape has ", sh.size(), " dims; attograd supports at most ", kMaxDims);
  // The product of the non-zero dims bounds every stride, so it must fit in int64 even
  // when a zero dim makes the tensor empty.
  int64_t span = 1;
  for (size_t i = 0; i < sh.size(); ++i) {
    uint64_t d = to_u64(sh[i], tn + ": shape dim " + std::to_string(i));
    if (d > uint64_t(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(span, std::max<int64_t>(int64_t(d), 1), &span))
      fail(tn, ": shape dim ", i, " (", d, ") is too large");
    e.shape.push_back(int64_t(d));
  }

  const json& off = info["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    fail(tn, ": data_offsets must be [begin, end], got ",
         off.is_array() ? "an array of " + std::to_string(off.size()) : describe(off));
  e.begin = to_u64(off[0], tn + ": data_offsets begin");
  e.end = to_u64(off[1], tn + ": data_offsets end");
  if (e.begin > e.end) fail(tn, ": data_offsets [", e.begin, ", ", e.end, "] has begin > end");
  if (e.end > data_size)
    fail(tn, ": data_offsets [", e.begin, ", ", e.end, "] go beyond the data buffer (", data_size,
         " bytes); the file is truncated or corrupt");

  // numel * itemsize, checked: span fits int64 but times 8 may not (F64 [2^61] wrapped
  // to 0 bytes and loaded over an empty buffer, F32 [2^62 + 1] to 4 bytes).
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(uint64_t(numel(e.shape)), uint64_t(itemsize(e.dtype)), &nbytes))
    fail(tn, ": shape ", e.shape, " of ", dt.get<std::string>(), " needs 2^64 bytes or more but data_offsets [",
         e.begin, ", ", e.end, "] hold ", e.end - e.begin);
  if (nbytes != e.end - e.begin)
    fail(tn, ": shape ", e.shape, " of ", dt.get<std::string>(), " needs ", nbytes, " bytes but data_offsets [",
         e.begin, ", ", e.end, "] hold ", e.end - e.begin);
  return e;
}

Metadata Reader::parse_metadata(const json& m) const {
  Metadata out;
  if (m.is_null()) return out;  // what the reference writer's `metadata=None` means
  if (!m.is_object()) fail("__metadata__ must be an object of strings, got ", describe(m));
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) fail("__metadata__ value for ", squoted(k), " must be a string, got ", describe(v));
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

json Reader::parse_header(const std::string& text) const {
  // Duplicate names would silently keep the last one: a SAX pass collects the
  // top-level keys first. (Not parse()'s callback: nlohmann's callback parser rescans
  // the enclosing object at each object's end, quadratic in the tensors of a file.)
  DuplicateKeys keys;
  json::sax_parse(text, &keys, json::input_format_t::json, /*strict=*/true);
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) { fail("header is not valid JSON: ", e.what()); }
  const std::string& duplicate = keys.duplicate;
  if (!header.is_object()) fail("header must be a JSON object, got ", describe(header));
  if (!duplicate.empty()) fail("header names ", squoted(duplicate), " twice");
  return header;
}

std::vector<Reader::Entry> Reader::layout(const json& header, uint64_t data_size, Metadata& metadata) const {
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__")
      metadata = parse_metadata(info);
    else
      entries.push_back(parse_entry(name, info, data_size));
  }
  // File order; ties (empty tensors) keep name order since json objects are sorted.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  uint64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < covered)
      fail("tensor ", squoted(e.name), " (bytes [", e.begin, ", ", e.end, ")) overlaps tensor ",
           squoted(entries[i - 1].name));
    if (e.begin > covered)
      fail("tensor ", squoted(e.name), " starts at byte ", e.begin, ", leaving a hole after byte ", covered,
           " of the data buffer");
    covered = e.end;
  }
  if (covered != data_size) fail("the data buffer has ", data_size, " bytes but the tensors cover only ", covered);
  return entries;
}

}  // namespace ag::safetensors_detail
