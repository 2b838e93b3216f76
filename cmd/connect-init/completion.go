package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// completionCommand is `connect-init completion bash|zsh|fish`: a script
// that completes the commands, each command's flags (as -h lists them,
// from the same flag sets) and the CONNECT_INIT_* names.
func (c *cli) completionCommand(ctx context.Context, args []string) int {
	if len(args) == 1 && isHelpFlag(args[0]) {
		fmt.Fprintln(c.stdout, "usage of connect-init completion bash|zsh|fish")
		fmt.Fprintln(c.stdout)
		writeAbout(c.stdout, "completion")
		writeExitCodes(c.stdout, "completion")
		return exitcode.OK
	}
	if len(args) != 1 || !slices.Contains([]string{"bash", "zsh", "fish"}, args[0]) {
		return c.usageError(fmt.Sprintf("completion takes one shell, bash, zsh or fish (got %q)", args), "run connect-init completion bash (or zsh, or fish)")
	}
	words := completionWords(ctx)
	switch args[0] {
	case "bash":
		writeBash(c.stdout, words)
	case "zsh":
		fmt.Fprintln(c.stdout, "#compdef connect-init")
		fmt.Fprintln(c.stdout, "autoload -U +X bashcompinit && bashcompinit")
		writeBash(c.stdout, words)
	case "fish":
		writeFish(c.stdout, words)
	}
	return exitcode.OK
}

// completionWords are the commands, and for each the words after it:
// its subcommands and flags.
type completion struct {
	commands []string
	after    map[string][]string
}

// completionWords reads every command's flags from its own flag set (the
// command run with -h and a flag spy, so that nothing is printed and
// nothing touched).
func completionWords(ctx context.Context) completion {
	out := completion{after: map[string][]string{}}
	for _, sc := range subcommands() {
		out.commands = append(out.commands, sc.name)
		args := []string{"-h"}
		switch sc.name {
		case "help":
			continue
		case "version":
			out.after[sc.name] = []string{"--json"}
			continue
		case "completion":
			out.after[sc.name] = []string{"bash", "zsh", "fish"}
			continue
		case "lock":
			args = []string{"acquire", "-h"}
		}
		spy := &cli{stdout: io.Discard, stderr: io.Discard, flagSpy: func(fs *flag.FlagSet, cmd command) {
			fs.VisitAll(func(f *flag.Flag) {
				if !slices.Contains(cmd.hidden, f.Name) {
					out.after[sc.name] = append(out.after[sc.name], "--"+f.Name)
				}
			})
		}}
		sc.run(spy, ctx, args)
		out.after[sc.name] = append(slices.Clone(subcommandWords[sc.name]), out.after[sc.name]...)
	}
	out.after["help"] = out.commands
	return out
}

// settingNames are the CONNECT_INIT_* names, each with its "=".
func settingNames() []string {
	var out []string
	for _, r := range settings.Table() {
		out = append(out, r.Env+"=")
	}
	return out
}

func writeBash(w io.Writer, words completion) {
	fmt.Fprintf(w, `# connect-init completion for bash: source <(connect-init completion bash)
_connect_init() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [[ $cur == CONNECT_* ]]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    compopt -o nospace 2>/dev/null
    return
  fi
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  case ${COMP_WORDS[1]} in
`, strings.Join(settingNames(), " "), strings.Join(words.commands, " "))
	for _, cmd := range words.commands {
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", cmd, strings.Join(words.after[cmd], " "))
	}
	fmt.Fprint(w, "  esac\n}\ncomplete -F _connect_init connect-init\n")
}

func writeFish(w io.Writer, words completion) {
	fmt.Fprintln(w, "# connect-init completion for fish: connect-init completion fish | source")
	fmt.Fprintln(w, "complete -c connect-init -f")
	for _, sc := range subcommands() {
		fmt.Fprintf(w, "complete -c connect-init -n __fish_use_subcommand -a %s -d %s\n", sc.name, fishQuote(sc.summary))
	}
	for _, cmd := range words.commands {
		for _, word := range words.after[cmd] {
			cond := fishQuote("__fish_seen_subcommand_from " + cmd)
			if name, ok := strings.CutPrefix(word, "--"); ok {
				fmt.Fprintf(w, "complete -c connect-init -n %s -l %s\n", cond, name)
			} else {
				fmt.Fprintf(w, "complete -c connect-init -n %s -a %s\n", cond, word)
			}
		}
	}
	fmt.Fprintf(w, "complete -c connect-init -a %s\n", fishQuote(strings.Join(settingNames(), " ")))
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
