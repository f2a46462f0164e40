# Doxygen input filter for the public headers (FILTER_PATTERNS in Doxyfile.in).
# The headers write code examples and aligned tables as comment lines indented by two
# or more extra spaces after a line that ends with ":" or after an empty comment line:
#   /// Example:
#   ///   nn::Linear lin(nn::LinearOptions(4, 5));
# Markdown would reflow them into the paragraph. This wraps each such run in
# \code ... \endcode, appended to existing lines so that line numbers (and so
# Doxygen's warnings) stay those of the header. Indented lines after any other line
# continue a list item or a paragraph and are left alone.
function is_run(l) { return l ~ /^[ \t]*\/\/\/   +[^ ]/ }
function is_comment(l) { return l ~ /^[ \t]*\/\/\/([^<]|$)/ }
function opens_block(l) {
  return !is_comment(l) || l ~ /:[ \t]*$/ || l ~ /^[ \t]*\/\/\/[ \t]*$/ || l ~ /\\file[ \t]*$/
}
{ line[NR] = $0 }
END {
  state = 0   # 0 outside a run, 1 in a wrapped run, 2 in a run left alone
  for (i = 1; i <= NR; i++) {
    l = line[i]
    if (state == 0 && is_run(l)) {
      prev = (i > 1) ? line[i - 1] : ""
      if (!opens_block(prev)) state = 2
      else {
        if (is_comment(prev)) line[i - 1] = prev " \\code"
        else { sub(/\/\/\//, "/// \\code", l); line[i] = l }
        state = 1
      }
    }
    if (state != 0 && (i == NR || !is_run(line[i + 1]))) {
      if (state == 1) line[i] = line[i] " \\endcode"
      state = 0
    }
  }
  for (i = 1; i <= NR; i++) print line[i]
}
