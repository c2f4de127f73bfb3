// kforge completion bash|zsh: a completion script written from the command table itself,
// so it names every command and option this binary has.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "app/commands.h"
#include "core/error.h"
#include "service/bundled.h"
#include "service/service.h"

namespace kforge {
namespace {

struct OptionWords {
  std::string names;  ///< "--out -o"
  bool takes_value = false;
  std::string help;
  std::string values;  ///< the values it takes, space-separated ("" : any)
};

/// The choices a validator names in the option's type ("TEXT:{debug,regenerate}").
std::string Choices(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  const size_t open = type.find('{'), close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  std::string out = type.substr(open + 1, close - open - 1);
  for (char& c : out)
    if (c == ',') c = ' ';
  return out;
}

std::vector<OptionWords> OptionsOf(const CLI::App& sub) {
  std::vector<OptionWords> out;
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_lnames().empty() && o->get_snames().empty()) continue;  // positional
    OptionWords w;
    for (const auto& l : o->get_lnames()) w.names += (w.names.empty() ? "--" : " --") + l;
    for (const auto& s : o->get_snames()) w.names += (w.names.empty() ? "-" : " -") + s;
    w.takes_value = o->get_type_size() != 0;
    w.help = o->get_description().substr(0, o->get_description().find('\n'));
    w.values = Choices(*o);
    out.push_back(std::move(w));
  }
  return out;
}

/// What a subcommand's first positional completes to: the bundled task names where it
/// takes a task, the choices where it names them.
std::string FirstPositionalWords(const CLI::App& sub, const std::string& task_names) {
  for (const CLI::Option* o : sub.get_options()) {
    if (!o->get_lnames().empty() || !o->get_snames().empty()) continue;
    return o->get_name() == "task" ? task_names : Choices(*o);
  }
  return "";
}

/// Text safe inside a zsh single-quoted _arguments spec: no quotes, brackets or colons.
std::string ZshText(std::string s) {
  for (char& c : s)
    if (c == '\'' || c == '[' || c == ']' || c == ':' || c == '\\' || c == '`' || c == '$') c = ' ';
  return s.substr(0, 70);
}

std::string Bash(const CLI::App& app, const std::string& task_names) {
  std::string commands, cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // not listed (verify-worker)
    commands += (commands.empty() ? "" : " ") + sub->get_name();
    std::string words, values;
    for (const auto& o : OptionsOf(*sub)) {
      words += (words.empty() ? "" : " ") + o.names;
      if (!o.values.empty()) {
        std::string alternatives = o.names;
        for (char& c : alternatives)
          if (c == ' ') c = '|';
        values += "        " + alternatives + ") words=\"" + o.values + "\" only=1 ;;\n";
      }
    }
    std::string first = FirstPositionalWords(*sub, task_names), nested;
    for (const CLI::App* inner : sub->get_subcommands({}))  // kforge db query QUESTION
      nested += (nested.empty() ? "" : " ") + inner->get_name();
    cases += "    " + sub->get_name() + ")\n      opts=\"" + words + " --help\"\n";
    if (!values.empty()) cases += "      case \"$prev\" in\n" + values + "      esac\n";
    if (!nested.empty()) {
      cases += "      [ \"$COMP_CWORD\" -eq 2 ] && words=\"" + nested + "\"\n";
      for (const CLI::App* inner : sub->get_subcommands({}))
        if (std::string q = FirstPositionalWords(*inner, task_names); !q.empty())
          cases += "      [ \"$COMP_CWORD\" -eq 3 ] && [ \"${COMP_WORDS[2]}\" = " + inner->get_name() +
                   " ] && words=\"" + q + "\"\n";
    } else if (!first.empty()) {
      cases += "      [ \"$COMP_CWORD\" -eq 2 ] && [ -z \"$words\" ] && words=\"" + first + "\"\n";
    }
    cases += "      ;;\n";
  }
  return "# kforge completion for bash: source <(kforge completion bash)\n"
         "_kforge() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" opts=\"\" words=\"\" "
         "only=\"\"\n"
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
         "  elif [ -n \"$only\" ]; then\n"
         "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "  elif [ -n \"$words\" ]; then\n"
         "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _kforge kforge\n";
}

std::string Zsh(const CLI::App& app) {
  std::string commands, cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // not listed (verify-worker)
    commands += "    '" + sub->get_name() + ":" + ZshText(sub->get_description()) + "'\n";
    std::string specs;
    for (const auto& o : OptionsOf(*sub)) {
      std::string first = o.names.substr(0, o.names.find(' '));
      const std::string value = o.values.empty() ? ":value:_files" : ":value:(" + o.values + ")";
      specs += " '" + first + "[" + ZshText(o.help) + "]" + (o.takes_value ? value : "") + "'";
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

CommandAction SetupCompletion(CLI::App& sub, Service& service, CancellationToken&) {
  auto shell = std::make_shared<std::string>();
  sub.add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  sub.footer("bash: source <(kforge completion bash)   zsh: kforge completion zsh > \"${fpath[1]}/_kforge\"");
  return [shell, &sub, &service]() -> int {
    const CLI::App& app = *sub.get_parent();
    std::string task_names;  // the bundled tasks, by the names the commands take
    for (const std::string& f : BundledTaskFiles(service.config()))
      task_names += (task_names.empty() ? "" : " ") + std::filesystem::path(f).stem().string();
    std::cout << (*shell == "bash" ? Bash(app, task_names) : Zsh(app));
    return 0;
  };
}

}  // namespace kforge
