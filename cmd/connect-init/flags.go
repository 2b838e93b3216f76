package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connect-init/connect-init/settings"
)

// parseAll parses args into fs as the flag package does (-f, --f, -f=v,
// -f v; a bool flag takes no separate value; flags end at "--" or the
// first argument that is not one), but it goes on past a bad flag, so
// that every bad flag of the command line is reported at once with the
// settings' problems (issue 52). help is set by -h, -help or --help
// (unless the command defines such a flag). fs.Args() holds the
// arguments after the flags.
func parseAll(fs *flag.FlagSet, cmdPath string, args []string) (problems []error, help bool) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = args[i+1:]
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = args[i:]
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := fs.Lookup(name)
		if f == nil && (name == "h" || name == "help") {
			help = true
			continue
		}
		if f == nil || name == "" || strings.HasPrefix(name, "-") {
			problems = append(problems, unknownFlag(fs, cmdPath, a, name))
			continue
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() && !hasValue {
			value, hasValue = "true", true
		}
		if !hasValue {
			if i+1 >= len(args) {
				problems = append(problems, &settings.ConfigError{Setting: "--" + name, Problem: "needs a value",
					Fix: fmt.Sprintf("give it as --%s=%s", name, placeholder(f))})
				continue
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			problems = append(problems, badFlagValue(f, name, value, err))
		}
	}
	// The flag package keeps the arguments after the flags: hand it only
	// those, behind "--", which it takes as the end of the flags.
	_ = fs.Parse(append([]string{"--"}, rest...))
	return problems, help
}

// unknownFlag is the problem of a flag the command does not have, with
// the nearest of its flags when one is close (settings.Suggest).
func unknownFlag(fs *flag.FlagSet, cmdPath, arg, name string) error {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	fix := "see connect-init " + cmdPath + " -h for its flags"
	if near, ok := settings.Suggest(name, names); ok {
		fix = "did you mean --" + near + "? (connect-init " + cmdPath + " -h lists its flags)"
	}
	return &settings.ConfigError{Setting: "--" + name, Problem: fmt.Sprintf("is not a flag of connect-init %s (got %q)", cmdPath, arg), Fix: fix}
}

// badFlagValue is the problem of a value a flag could not take: a
// setting's flag says it itself (settings.SetFlag); the command's own
// flags say what their type wants.
func badFlagValue(f *flag.Flag, name, value string, err error) error {
	var ce *settings.ConfigError
	if errors.As(err, &ce) {
		return ce
	}
	problem := fmt.Sprintf("cannot be parsed as %s (got %q)", placeholder(f), value)
	var fe *flagError
	switch {
	case errors.As(err, &fe):
		return &settings.ConfigError{Setting: "--" + name, Problem: fe.problem, Fix: fe.fix}
	case errors.Is(err, errTooLarge):
		problem = fmt.Sprintf("is too large (got %q)", value)
	}
	return &settings.ConfigError{Setting: "--" + name, Problem: problem, Fix: valueFix(f)}
}

// errTooLarge is a number flag's value beyond its type.
var errTooLarge = errors.New("too large")

// flagError is what a command's own flag says of a value it refuses:
// the problem and the fix, the flag named by parseAll.
type flagError struct{ problem, fix string }

func (e *flagError) Error() string { return e.problem + ": " + e.fix }

// funcFlag is a command's own flag that set reads, shown in -h and in
// errors as placeholder (topic,..., rate).
type funcFlag struct {
	placeholder string
	set         func(string) error
	value       string
}

func (f *funcFlag) String() string {
	if f == nil {
		return ""
	}
	return f.value
}

func (f *funcFlag) Set(v string) error {
	if err := f.set(v); err != nil {
		return err
	}
	f.value = v
	return nil
}

func (f *funcFlag) Placeholder() string { return f.placeholder }

// funcVar declares a funcFlag.
func funcVar(fs *flag.FlagSet, name, placeholder, usage string, set func(string) error) {
	fs.Var(&funcFlag{placeholder: placeholder, set: set}, name, usage)
}

// countFlag is a whole decimal number: the flag package's IntVar reads
// -010 as -8 and takes 0x10 (base 0); the settings are decimal only, and
// so are the commands' own flags.
type countFlag struct{ p *int }

func (c countFlag) String() string {
	if c.p == nil {
		return "0"
	}
	return strconv.Itoa(*c.p)
}

func (c countFlag) Set(v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errTooLarge
	case err != nil:
		return err
	}
	*c.p = int(n)
	return nil
}

func (countFlag) Placeholder() string { return "count" }

// countVar declares a countFlag with its default.
func countVar(fs *flag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	fs.Var(countFlag{p}, name, usage)
}

// placeholder names what a flag's value is, by its type: duration,
// count, bool, or the flag's own word (topic,..., host:port).
func placeholder(f *flag.Flag) string {
	if sf, ok := f.Value.(*settingFlag); ok {
		return sf.row.Type()
	}
	if p, ok := f.Value.(interface{ Placeholder() string }); ok {
		return p.Placeholder()
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "duration"
		case int, int64, uint, uint64:
			return "count"
		case bool:
			return "bool"
		}
	}
	name, _ := flag.UnquoteUsage(f)
	if name == "" || name == "value" {
		return "string"
	}
	return name
}

// valueFix is what a flag's type wants, as a fix.
func valueFix(f *flag.Flag) string {
	switch placeholder(f) {
	case "duration":
		return "use a Go duration such as 90s, 5m or 1h"
	case "count":
		return "use a whole decimal number such as 3"
	case "bool":
		return "use true or false, or the flag alone for true"
	}
	return "see the flag in -h"
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
