/// JUnit XML: well-formed whatever the messages hold (markup characters, control characters,
/// invalid UTF-8), one <testcase> per variant, the counterexample in the <failure> text.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pagecheck/verify/check/junit.h"

namespace pagecheck::verify::check {
namespace {

using Doc = std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)>;

/// Parses strictly (no recovery); null on any error.
Doc parse(const std::string& xml) {
  return Doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
             xmlFreeDoc);
}

/// Text content of the first element named `name` below `node` (depth first).
std::string first_text(xmlNodePtr node, const char* name) {
  for (xmlNodePtr n = node; n != nullptr; n = n->next) {
    if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST name)) {
      xmlChar* content = xmlNodeGetContent(n);
      std::string out(reinterpret_cast<const char*>(content));
      xmlFree(content);
      return out;
    }
    const std::string inner = first_text(n->children, name);
    if (!inner.empty()) return inner;
  }
  return {};
}

int count(xmlNodePtr node, const char* name) {
  int n = 0;
  for (; node != nullptr; node = node->next) {
    if (node->type == XML_ELEMENT_NODE && xmlStrEqual(node->name, BAD_CAST name)) ++n;
    n += count(node->children, name);
  }
  return n;
}

TEST(JUnit, HostileTextStaysWellFormed) {
  JUnitCase c;
  c.classname = "pagecheck.verify.paged_attention";
  c.name = "v<1>&\"quoted\"";
  c.problem = "failure";
  c.message = "got ]]> and <tag> & \x01\x1f bell\x07";
  c.text =
      "COUNTEREXAMPLE a<b && c>d\n  reproduce: pagecheck verify --reproduce-spec '{\"a\":1}'\n"
      "bad utf-8: \xff\xfe";
  const std::string xml = junit_xml("suite & <co>", {c}, 1.5);
  const Doc doc = parse(xml);
  ASSERT_TRUE(doc) << xml;
  const std::string text = first_text(xmlDocGetRootElement(doc.get()), "failure");
  EXPECT_NE(text.find("COUNTEREXAMPLE a<b && c>d"), std::string::npos) << text;
  EXPECT_NE(text.find("--reproduce-spec '{\"a\":1}'"), std::string::npos) << text;
}

TEST(JUnit, OneTestCasePerVariantWithTheCounterexample) {
  RunReport report;
  VariantReport good, bad;
  good.registry = bad.registry = "builtin";
  good.family = bad.family = "gather_cached_kv";
  good.variant = "naive";
  good.run = good.passed = 10;
  bad.variant = "vectorized";
  bad.run = 3;
  bad.passed = 2;
  bad.failed = 1;
  FailureInfo f;
  f.case_index = 2;
  f.spec_text = "gather_cached_kv float16 block_size=16";
  f.message = "slot 3 differs";
  f.reproduce = "{\"family\":\"gather_cached_kv\"}";
  bad.failure = f;
  report.variants = {good, bad};
  const std::string xml = junit_xml("pagecheck verify", junit_cases(report), 2);
  const Doc doc = parse(xml);
  ASSERT_TRUE(doc) << xml;
  xmlNodePtr root = xmlDocGetRootElement(doc.get());
  EXPECT_EQ(count(root, "testcase"), 2);
  EXPECT_EQ(count(root, "failure"), 1);
  const std::string text = first_text(root, "failure");
  EXPECT_NE(text.find("COUNTEREXAMPLE gather_cached_kv/vectorized"), std::string::npos) << text;
  EXPECT_NE(text.find("gather_cached_kv float16 block_size=16"), std::string::npos) << text;
  EXPECT_NE(text.find("reproduce"), std::string::npos) << text;
}

}  // namespace
}  // namespace pagecheck::verify::check
