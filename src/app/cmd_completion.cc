// kforge completion bash|zsh: a completion script written from the command table itself,
// so it names every command and option this binary has.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "app/commands.h"
#include "core/error.h"

namespace kforge {
namespace {

struct OptionWords {
  std::string names;  ///< "--out -o"
  bool takes_value = false;
  std::string help;
};

std::vector<OptionWords> OptionsOf(const CLI::App& sub) {
  std::vector<OptionWords> out;
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_lnames().empty() && o->get_snames().empty()) continue;  // positional
    OptionWords w;
    for (const auto& l : o->get_lnames()) w.names += (w.names.empty() ? "--" : " --") + l;
    for (const auto& s : o->get_snames()) w.names += (w.names.empty() ? "-" : " -") + s;
    w.takes_value = o->get_type_size() != 0;
    w.help = o->get_description().substr(0, o->get_description().find('\n'));
    out.push_back(std::move(w));
  }
  return out;
}

/// Text safe inside a zsh single-quoted _arguments spec: no quotes, brackets or colons.
std::string ZshText(std::string s) {
  for (char& c : s)
    if (c == '\'' || c == '[' || c == ']' || c == ':' || c == '\\' || c == '`' || c == '$') c = ' ';
  return s.substr(0, 70);
}

std::string Bash(const CLI::App& app) {
  std::string commands, cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands += (commands.empty() ? "" : " ") + sub->get_name();
    std::string words;
    for (const auto& o : OptionsOf(*sub)) words += (words.empty() ? "" : " ") + o.names;
    cases += "    " + sub->get_name() + ") opts=\"" + words + " --help\" ;;\n";
  }
  return "# kforge completion for bash: source <(kforge completion bash)\n"
         "_kforge() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" opts=\"\"\n"
         "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
         "    COMPREPLY=($(compgen -W \"" +
         commands +
         " --help --version\" -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  case \"${COMP_WORDS[1]}\" in\n" +
         cases +
         "  esac\n"
         "  if [[ \"$cur\" == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _kforge kforge\n";
}

std::string Zsh(const CLI::App& app) {
  std::string commands, cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands += "    '" + sub->get_name() + ":" + ZshText(sub->get_description()) + "'\n";
    std::string specs;
    for (const auto& o : OptionsOf(*sub)) {
      std::string first = o.names.substr(0, o.names.find(' '));
      specs += " '" + first + "[" + ZshText(o.help) + "]" + (o.takes_value ? ":value:_files" : "") + "'";
    }
    cases += "    " + sub->get_name() + ") _arguments" + specs + " '*:file:_files' ;;\n";
  }
  return "#compdef kforge\n"
         "# kforge completion for zsh: kforge completion zsh > \"${fpath[1]}/_kforge\"\n"
         "_kforge() {\n"
         "  local -a commands\n"
         "  commands=(\n" +
         commands +
         "  )\n"
         "  if (( CURRENT == 2 )); then\n"
         "    _describe 'command' commands\n"
         "    return\n"
         "  fi\n"
         "  case $words[2] in\n" +
         cases +
         "  esac\n"
         "}\n"
         "_kforge \"$@\"\n";
}

}  // namespace

CommandAction SetupCompletion(CLI::App& sub, Machine&, CancellationToken&) {
  auto shell = std::make_shared<std::string>();
  sub.add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  sub.footer("bash: source <(kforge completion bash)   zsh: kforge completion zsh > \"${fpath[1]}/_kforge\"");
  return [shell, &sub]() -> int {
    const CLI::App& app = *sub.get_parent();
    std::cout << (*shell == "bash" ? Bash(app) : Zsh(app));
    return 0;
  };
}

}  // namespace kforge
