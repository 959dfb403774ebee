#pragma once
/// Shrinks of a spec itself, for the second shrinking pass after the generator's own tree.
/// The generator's tree (RapidCheck's gen::exec) shrinks its choices in one left-to-right pass
/// and re-derives what depends on them (a `full_table` sequence is as wide as the widest
/// other one), so its local minimum can still hold a sequence that is only there to keep
/// another one long; these shrinks act on the spec's fields directly and keep everything else.
#include <rapidcheck.h>

#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen {

/// The immediate shrinks of `spec`, simplest first, each valid (validate() passes):
/// attention: without one sequence (any one, its query length with it), without the spare
/// block-table columns, with its referenced blocks renumbered 0, 1, ... in order of use and the
/// unreferenced ones dropped (one kept for padded table rows to point at), without table
/// padding and loose bound, as plain decode, without sinks, window or soft-cap, causal, one
/// sequence's context shortened toward 1 (its table row cut and its query capped to match),
/// one sequence's query shortened toward 1; copies: without one token (any one). Strides,
/// cache, dtype, heads, regime and content seed stay.
std::vector<CaseSpec> spec_shrinks(const CaseSpec& spec);

/// `spec` with spec_shrinks applied recursively, for rc::shrinkable::findLocalMin.
rc::Shrinkable<CaseSpec> shrinkable_spec(const CaseSpec& spec);

/// The shrunk form of a failing case: pass 1 searches the generator's tree `root` (its value
/// the failing case), pass 2 the spec's own tree from pass 1's minimum, each with
/// rc::shrinkable::findLocalMin; `still_fails(spec)` is asked about every candidate (and may
/// stop the search by answering false from then on).
template <typename Predicate>
CaseSpec shrink_case(const rc::Shrinkable<CaseSpec>& root, const Predicate& still_fails) {
  const CaseSpec first = rc::shrinkable::findLocalMin(root, still_fails).first;
  return rc::shrinkable::findLocalMin(shrinkable_spec(first), still_fails).first;
}

}  // namespace pagecheck::verify::gen
