package settings

import (
	"slices"
	"strings"
)

// DocsTableBegin and DocsTableEnd mark the tables of docs/settings.md
// (MarkdownTable) and of README.md (CommonTable) that a test keeps equal to
// table.
const (
	DocsTableBegin = "<!-- settings table: generated from settings.Table(); go test ./settings -run TestDocsTable -update -->"
	DocsTableEnd   = "<!-- end of settings table -->"
)

// CommonTable is the README's table: the settings most people set (the
// rows marked Common), without flags and commands.
func CommonTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Default | Meaning |\n|---|---|---|\n")
	for _, r := range table {
		if !r.Common {
			continue
		}
		def := r.ShownDefault()
		if def == "" {
			def = "none"
		}
		b.WriteString("| `" + r.Env + "` | " + def + " | " + r.Help + " |\n")
	}
	return b.String()
}

// MarkdownTable is the settings table of docs/settings.md, one line per
// row of table.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | Default | Commands | Meaning |\n|---|---|---|---|---|\n")
	for _, r := range table {
		def := r.ShownDefault()
		if def == "" {
			def = "none"
		}
		b.WriteString("| `" + r.Env + "` | " + docFlag(r) + " | " + def + " | " + docCommands(r.Commands) + " | " + r.Help + " |\n")
	}
	return b.String()
}

// docFlag is the flag column: the flag, with the commands that take it
// when fewer than the setting's.
func docFlag(r Setting) string {
	if r.Flag == "" {
		return "–"
	}
	if r.FlagCommands == nil {
		return "`--" + r.Flag + "`"
	}
	var out []string
	for _, c := range r.FlagCommands {
		out = append(out, "`"+string(c)+" --"+r.Flag+"`")
	}
	return strings.Join(out, ", ")
}

// docCommands is the commands column ("all" for every command that reads
// settings, offsets included).
func docCommands(cmds []Command) string {
	if len(cmds) == len(all)+1 && slices.Contains(cmds, Offsets) && !slices.ContainsFunc(all, func(c Command) bool { return !slices.Contains(cmds, c) }) {
		return "all"
	}
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = string(c)
	}
	return strings.Join(out, ", ")
}
