#pragma once
// Enum <-> name tables. Each enum kforge writes into a verdict, an event or a summary has
// exactly one table of {value, name} pairs; its Name/TryParse functions are the only places
// its names appear. Code compares enums, never the names.
#include <cstddef>
#include <string_view>

namespace kforge {

template <class E>
struct NameEntry {
  E value;
  std::string_view name;
};

template <class E, size_t N>
constexpr std::string_view NameIn(const NameEntry<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

template <class E, size_t N>
constexpr bool ParseIn(const NameEntry<E> (&table)[N], std::string_view name, E* out) {
  for (const auto& e : table) {
    if (e.name == name) {
      *out = e.value;
      return true;
    }
  }
  return false;
}

}  // namespace kforge
