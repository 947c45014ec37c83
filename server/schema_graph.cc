#include "server/schema_graph.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace webhookd::schema {
namespace {

// Sums that stop just past the bound, so no schema overflows them.
size_t Add(size_t a, size_t b) { return std::min(a + b, kMaxCost + 1); }

struct Cost {
  size_t here = 0;   // nodes checked against the value itself
  size_t below = 0;  // nodes checked against one value below it, at most
  size_t Max() const { return std::max(here, below); }
};

// The nodes checked against the same value as `n` (draft 7 ignores a $ref's siblings).
template <typename F>
void ForEachInPlace(const SchemaNode& n, const F& f) {
  if (n.ref != nullptr) {
    f(*n.ref);
    return;
  }
  for (const auto* list : {&n.all_of, &n.any_of, &n.one_of}) {
    for (const SchemaNode* s : *list) f(*s);
  }
  for (const SchemaNode* s : {n.not_schema, n.if_schema, n.then_schema, n.else_schema}) {
    if (s != nullptr) f(*s);
  }
  for (const auto& [name, s] : n.dependency_schemas) f(*s);
}

// The nodes checked against a value below (an item, a member, a member's name).
template <typename F>
void ForEachBelow(const SchemaNode& n, const F& f) {
  if (n.ref != nullptr) return;
  for (const auto& [name, s] : n.properties) f(*s);
  for (const auto& [p, s] : n.pattern_properties) f(*s);
  for (const SchemaNode* s : n.items_list) f(*s);
  for (const SchemaNode* s :
       {n.additional_properties, n.property_names, n.items, n.additional_items, n.contains}) {
    if (s != nullptr) f(*s);
  }
}

class Graph {
 public:
  explicit Graph(const nlohmann::json& doc) : doc_(doc) {}

  std::optional<Problem> Run(CompiledTree& tree) {
    // Every node, reachable or not: a cycle among unused definitions is still refused.
    for (const auto& n : tree.nodes) {
      Visit(*n);
      if (problem_) return problem_;
    }
    tree.cost = costs_.at(tree.root).Max();
    if (tree.cost > kMaxCost) {
      return Problem{"", "is too complex: one payload value could be checked against more than " +
                             std::to_string(kMaxCost) +
                             " subschemas (count allOf, anyOf, oneOf, $ref and the like)"};
    }
    return std::nullopt;
  }

 private:
  void Visit(const SchemaNode& n) {
    if (problem_ || costs_.contains(&n)) return;
    if (std::find(stack_.begin(), stack_.end(), &n) != stack_.end()) {
      Cycle(n);
      return;
    }
    if (stack_.size() >= kMaxDepth) {
      problem_ = Problem{PointerTo(doc_, n.source), "nests more than " + std::to_string(kMaxDepth) +
                                                        " subschemas deep (through $ref)"};
      return;
    }
    stack_.push_back(&n);
    Cost c;
    c.here = 1;
    size_t below_here = 0;
    size_t max_property = 0;
    size_t max_item = 0;
    ForEachInPlace(n, [&](const SchemaNode& s) {
      Visit(s);
      if (problem_) return;
      c.here = Add(c.here, costs_[&s].here);
      below_here = Add(below_here, costs_[&s].below);
    });
    if (problem_) return;
    // One member matches one of `properties` at most, but every pattern; one item matches
    // one position at most.
    if (n.ref == nullptr) {
      for (const auto& [name, s] : n.properties) {
        Visit(*s);
        if (problem_) return;
        max_property = std::max(max_property, costs_[s].Max());
      }
      for (const SchemaNode* s : n.items_list) {
        Visit(*s);
        if (problem_) return;
        max_item = std::max(max_item, costs_[s].Max());
      }
      size_t below = Add(max_property, max_item);
      for (const auto& [p, s] : n.pattern_properties) {
        Visit(*s);
        if (problem_) return;
        below = Add(below, Add(costs_[s].Max(), 1));
      }
      for (const SchemaNode* s :
           {n.additional_properties, n.property_names, n.items, n.additional_items, n.contains}) {
        if (s == nullptr) continue;
        Visit(*s);
        if (problem_) return;
        below = Add(below, costs_[s].Max());
      }
      below_here = Add(below_here, below);
    }
    c.below = below_here;
    stack_.pop_back();
    costs_[&n] = c;
  }

  // `n` is on the stack: the path from it back to itself is a cycle.
  void Cycle(const SchemaNode& n) {
    auto from = std::find(stack_.begin(), stack_.end(), &n);
    std::string path;
    const SchemaNode* closing = nullptr;
    for (auto it = from; it != stack_.end(); ++it) {
      path += "#" + PointerTo(doc_, (*it)->source) + " -> ";
      if ((*it)->ref != nullptr) closing = *it;
    }
    const std::string here = PointerTo(doc_, n.source);
    path += "#" + here;
    // Every cycle passes a $ref: the subschemas themselves form a tree.
    problem_ = Problem{closing != nullptr ? PointerTo(doc_, closing->source) + "/$ref" : here,
                       "refers back to itself (" + path + "); recursive schemas are not supported"};
  }

  const nlohmann::json& doc_;
  std::unordered_map<const SchemaNode*, Cost> costs_;
  std::vector<const SchemaNode*> stack_;
  std::optional<Problem> problem_;
};

}  // namespace

size_t CountValues(const nlohmann::json& doc) {
  size_t n = 1;
  if (doc.is_object()) {
    for (const auto& member : doc) n += 1 + CountValues(member);
  } else if (doc.is_array()) {
    for (const auto& item : doc) n += CountValues(item);
  }
  return n;
}

std::optional<Problem> CheckGraph(CompiledTree& tree, const nlohmann::json& schema) {
  return Graph(schema).Run(tree);
}

}  // namespace webhookd::schema
