package workerconfig

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
)

// EscapeValue writes v so that java.util.Properties reads it back
// unchanged (Parse is the reader): every value connect-init adds to a
// worker's file or CONNECT_* variables passes through Properties.load,
// written by us or by the image's template.
func EscapeValue(v string) string { return escape(v, false) }

// EscapeKey is EscapeValue for a key, which also escapes what would end
// the key: spaces, =, :, and # or ! that would start a comment.
func EscapeKey(k string) string { return escape(k, true) }

func escape(v string, key bool) string {
	var b strings.Builder
	for i, r := range v {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case key && strings.ContainsRune(" =:#!", r):
			b.WriteRune('\\')
			b.WriteRune(r)
		case r == ' ' && i == 0:
			b.WriteString(`\ `)
		case r > 0x7e || r < 0x20:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Format writes props as a .properties file, one key=value line each in
// key order, that Parse (and java.util.Properties) reads back unchanged.
func Format(props map[string]string) []byte {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(EscapeKey(k) + "=" + EscapeValue(props[k]) + "\n")
	}
	return []byte(b.String())
}
