package main

import (
	"flag"
	"strings"
)

// flagName finds the flag a flag package error is about ("" if none).
func flagName(err error) string {
	msg := err.Error()
	for _, mid := range []string{" for flag -", " for -"} {
		if i := strings.Index(msg, mid); i >= 0 {
			name, _, _ := strings.Cut(msg[i+len(mid):], ":")
			return strings.TrimLeft(name, "-")
		}
	}
	for _, pre := range []string{"flag needs an argument: -", "flag provided but not defined: -"} {
		if i := strings.Index(msg, pre); i >= 0 {
			return strings.TrimLeft(strings.TrimSpace(msg[i+len(pre):]), "-")
		}
	}
	return ""
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
