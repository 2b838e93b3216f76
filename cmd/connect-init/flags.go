package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// parseCommandFlags parses the flags of `connect-init <usage>` (usage is
// the command's name, with its flags when -h should show them). It
// reports done when the command must end with code: after -h (the
// flags' defaults on stderr, exit 0), or after a bad flag (one
// configuration event naming the flag, exit 2, nothing touched).
func parseCommandFlags(fs *flag.FlagSet, args, env []string, stderr io.Writer, usage string) (code int, done bool) {
	err := fs.Parse(args)
	if err == nil {
		return 0, false
	}
	name, _, _ := strings.Cut(usage, " ")
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage of connect-init %s:\n", usage)
		fs.PrintDefaults()
		return startup.ExitOK, true
	}
	setting := "command line"
	if f := flagName(err); f != "" {
		setting = "--" + f
	}
	logConfigError(earlyLogger(stderr, env, args), &settings.ConfigError{Setting: setting, Problem: err.Error(), Fix: "see connect-init " + name + " -h"})
	return startup.ExitConfig, true
}

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
