/// JUnit XML through libxml2's xmlTextWriter.
#include "pagecheck/verify/check/junit.h"

#include <libxml/xmlstring.h>
#include <libxml/xmlwriter.h>

#include <memory>
#include <sstream>
#include <stdexcept>

#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::verify::check {
namespace {

/// XML 1.0 allows tab, newline and carriage return below 0x20 and no other C0 control; text
/// that is not UTF-8 (xmlCheckUTF8) would make the document unreadable. Replaces those bytes
/// with '?'.
std::string xml_safe(const std::string& text) {
  std::string out = text;
  for (char& ch : out) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ch = '?';
  }
  if (xmlCheckUTF8(reinterpret_cast<const unsigned char*>(out.c_str())) == 0) {
    for (char& ch : out) {
      if (static_cast<unsigned char>(ch) >= 0x80) ch = '?';
    }
  }
  return out;
}

const xmlChar* x(const char* s) {
  return reinterpret_cast<const xmlChar*>(s);
}

/// Thin owner of a writer into a memory buffer; every call checks libxml2's status.
class Writer {
 public:
  Writer() : buffer_(xmlBufferCreate(), xmlBufferFree) {
    if (!buffer_) throw std::runtime_error("junit: xmlBufferCreate failed");
    writer_ = xmlNewTextWriterMemory(buffer_.get(), 0);
    if (writer_ == nullptr) throw std::runtime_error("junit: xmlNewTextWriterMemory failed");
    xmlTextWriterSetIndent(writer_, 1);
  }
  ~Writer() {
    if (writer_ != nullptr) xmlFreeTextWriter(writer_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void check(int rc, const char* what) {
    if (rc < 0) throw std::runtime_error(std::string("junit: libxml2 failed to write ") + what);
  }
  void start(const char* element) {
    check(xmlTextWriterStartElement(writer_, x(element)), element);
  }
  void end() { check(xmlTextWriterEndElement(writer_), "an end tag"); }
  void attr(const char* name, const std::string& value) {
    check(xmlTextWriterWriteAttribute(writer_, x(name), x(xml_safe(value).c_str())), name);
  }
  void text(const std::string& value) {
    check(xmlTextWriterWriteString(writer_, x(xml_safe(value).c_str())), "text");
  }
  xmlTextWriterPtr get() { return writer_; }
  /// Ends the document and returns it.
  std::string finish() {
    check(xmlTextWriterEndDocument(writer_), "the document end");
    xmlFreeTextWriter(writer_);
    writer_ = nullptr;
    return std::string(reinterpret_cast<const char*>(xmlBufferContent(buffer_.get())),
                       static_cast<std::size_t>(xmlBufferLength(buffer_.get())));
  }

 private:
  std::unique_ptr<xmlBuffer, void (*)(xmlBufferPtr)> buffer_;
  xmlTextWriterPtr writer_ = nullptr;
};

std::string seconds_text(double s) {
  std::ostringstream os;
  os.precision(3);
  os << std::fixed << (s > 0 ? s : 0.0);
  return os.str();
}

}  // namespace

std::vector<JUnitCase> junit_cases(const RunReport& report) {
  std::vector<JUnitCase> out;
  for (const VariantReport& v : report.variants) {
    JUnitCase c;
    c.classname =
        "pagecheck.verify." + v.family + (v.registry == "builtin" ? "" : "." + v.registry);
    c.name = v.variant;
    c.seconds = v.seconds;
    std::ostringstream text;
    text << v.run << " cases: " << v.passed << " passed, " << v.failed << " failed, "
         << v.not_supported << " not supported, " << v.errors << " harness errors\n";
    if (v.failure) {
      c.problem = "failure";
      c.message = std::string(outcome_name(v.failure->outcome)) + ": " + v.failure->message;
      print_counterexample(text, v, report);
    } else if (!v.ok() && v.errors == 0) {
      c.problem = "failure";
      c.message = v.failed > 0 ? "failing cases" : "the variant refused most of its cases";
    } else if (v.errors > 0) {
      c.problem = v.failed > 0 ? "failure" : "error";
      c.message = "harness errors";
    }
    for (const auto& e : v.error_messages) text << "harness error: " << e << "\n";
    c.text = text.str();
    out.push_back(std::move(c));
  }
  return out;
}

std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases,
                      double seconds) {
  int failures = 0, errors = 0;
  for (const auto& c : cases) {
    failures += c.problem == "failure" ? 1 : 0;
    errors += c.problem == "error" ? 1 : 0;
  }
  Writer w;
  w.check(xmlTextWriterStartDocument(w.get(), nullptr, "UTF-8", nullptr), "the declaration");
  w.start("testsuites");
  w.start("testsuite");
  w.attr("name", suite);
  w.attr("tests", std::to_string(cases.size()));
  w.attr("failures", std::to_string(failures));
  w.attr("errors", std::to_string(errors));
  w.attr("time", seconds_text(seconds));
  for (const JUnitCase& c : cases) {
    w.start("testcase");
    w.attr("classname", c.classname);
    w.attr("name", c.name);
    w.attr("time", seconds_text(c.seconds));
    if (!c.problem.empty()) {
      w.start(c.problem == "error" ? "error" : "failure");
      w.attr("message", c.message);
      w.attr("type", c.problem);
      w.text(c.text);
      w.end();
    } else if (!c.text.empty()) {
      w.start("system-out");
      w.text(c.text);
      w.end();
    }
    w.end();
  }
  return w.finish();
}

void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<JUnitCase>& cases, double seconds) {
  verify::write_file_atomically(path, junit_xml(suite, cases, seconds));
}

}  // namespace pagecheck::verify::check
