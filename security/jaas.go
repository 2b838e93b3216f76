package security

import (
	"fmt"
	"regexp"
	"strings"
)

// JAASEntry is one login module entry of a JAAS configuration:
// `LoginModuleClass flag key="value" ...;`.
//
// Options hold credentials; an entry must never be printed or logged.
type JAASEntry struct {
	// LoginModule is the login module class name as written, e.g.
	// "org.apache.kafka.common.security.plain.PlainLoginModule".
	LoginModule string
	// Flag is the control flag, upper-cased: REQUIRED, REQUISITE,
	// SUFFICIENT or OPTIONAL.
	Flag string
	// Options maps option names to their unquoted, unescaped values.
	Options map[string]string
}

// String deliberately omits option values: entries carry passwords and
// secrets, and fmt must never be able to print them by accident.
func (e JAASEntry) String() string {
	keys := make([]string, 0, len(e.Options))
	for k := range e.Options {
		keys = append(keys, k)
	}
	return fmt.Sprintf("%s %s (options %s, values redacted)", safeIdent(e.LoginModule), e.Flag, strings.Join(keys, ","))
}

// GoString keeps %#v from printing option values too.
func (e JAASEntry) GoString() string { return e.String() }

// JAASError is a syntax error in a JAAS configuration. Its message names
// the problem and at most an option name, never a value, so it can be shown
// to users even though the configuration holds secrets.
type JAASError struct {
	Problem string
}

// Error returns the problem; it holds no option value.
func (e *JAASError) Error() string { return e.Problem }

// ParseJAAS parses a sasl.jaas.config value with the grammar and tokenizer
// rules of Kafka's org.apache.kafka.common.security.JaasConfig, which is
// what the Connect worker will use: one or more
// `<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;`
// entries, values either bare words or single/double quoted strings with
// java.io.StreamTokenizer escapes, and `//`, `/* */` and `/`-to-end-of-line
// comments. Parsing it ourselves (rather than guessing with a regexp) keeps
// connect-init from accepting configurations the worker rejects, or the
// reverse.
func ParseJAAS(s string) ([]JAASEntry, error) {
	t := newJAASTokenizer(s)
	var entries []JAASEntry
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(t, tok)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, &JAASError{"login module not specified in JAAS config"}
	}
	return entries, nil
}

// ParseJAASFile parses a static JAAS login configuration file (the
// java.security.auth.login.config file Kafka falls back to when
// sasl.jaas.config is not set) and returns the entries of section name,
// e.g. "KafkaClient". found is false when the file has no such section.
//
// The file format is `Name { entry; entry; };` repeated. Java's ConfigFile
// also expands ${system.property} references; those are reported as an
// error because connect-init cannot know the worker JVM's properties.
func ParseJAASFile(content, name string) (entries []JAASEntry, found bool, err error) {
	t := newJAASTokenizer(content)
	t.braces = true
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			return nil, false, nil
		}
		if tok.kind != tokWord && tok.kind != tokQuoted {
			return nil, false, &JAASError{"JAAS file: expected a login context name"}
		}
		section := tok.text
		if open := t.next(); open.kind != tokChar || open.char != '{' {
			return nil, false, &JAASError{"JAAS file: expected '{' after login context name " + safeIdent(section)}
		}
		var sectionEntries []JAASEntry
		for {
			tok = t.next()
			if tok.kind == tokChar && tok.char == '}' {
				break
			}
			if tok.kind == tokEOF {
				return nil, false, &JAASError{"JAAS file: login context " + safeIdent(section) + " is not closed with '}'"}
			}
			e, err := parseJAASEntry(t, tok)
			if err != nil {
				return nil, false, err
			}
			sectionEntries = append(sectionEntries, e)
		}
		if semi := t.next(); semi.kind != tokChar || semi.char != ';' {
			return nil, false, &JAASError{"JAAS file: expected ';' after '}' of login context " + safeIdent(section)}
		}
		if section == name {
			for _, e := range sectionEntries {
				for _, v := range e.Options {
					if strings.Contains(v, "${") {
						return nil, false, &JAASError{"JAAS file: login context " + safeIdent(section) + " uses ${...} property expansion, which connect-init cannot resolve; write the values literally or use sasl.jaas.config"}
					}
				}
			}
			if len(sectionEntries) == 0 {
				return nil, false, &JAASError{"JAAS file: login context " + safeIdent(section) + " has no login module"}
			}
			return sectionEntries, true, nil
		}
	}
}

func parseJAASEntry(t *jaasTokenizer, first jaasToken) (JAASEntry, error) {
	if first.kind != tokWord && first.kind != tokQuoted {
		return JAASEntry{}, &JAASError{"JAAS config: expected a login module class name"}
	}
	e := JAASEntry{LoginModule: first.text, Options: map[string]string{}}
	flag := t.next()
	if flag.kind == tokEOF {
		return JAASEntry{}, &JAASError{"login module control flag not specified in JAAS config"}
	}
	if flag.kind != tokWord && flag.kind != tokQuoted {
		return JAASEntry{}, &JAASError{"login module control flag is not available in the JAAS config"}
	}
	switch f := strings.ToUpper(flag.text); f {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		e.Flag = f
	default:
		// The token may be a misplaced secret: do not echo it.
		return JAASEntry{}, &JAASError{"invalid login module control flag in JAAS config (expected required, requisite, sufficient or optional after the login module class)"}
	}
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			return JAASEntry{}, &JAASError{"JAAS config entry not terminated by semi-colon"}
		}
		if tok.kind == tokChar && tok.char == ';' {
			return e, nil
		}
		if tok.kind != tokWord && tok.kind != tokQuoted {
			return JAASEntry{}, &JAASError{"JAAS config: expected an option name or ';'"}
		}
		key := tok.text
		eq := t.next()
		if eq.kind != tokChar || eq.char != '=' {
			return JAASEntry{}, &JAASError{"value not specified for key " + safeOption(key) + " in JAAS config"}
		}
		val := t.next()
		if val.kind != tokWord && val.kind != tokQuoted {
			return JAASEntry{}, &JAASError{"value not specified for key " + safeOption(key) + " in JAAS config"}
		}
		e.Options[key] = val.text
	}
}

// knownOptions are option names of Kafka's and the JDK's login modules;
// only these are named in errors, as any other word may be a misplaced
// secret.
var knownOptions = map[string]bool{
	"username": true, "password": true, "tokenauth": true, "clientId": true, "clientSecret": true, "scope": true,
	"useKeyTab": true, "keyTab": true, "principal": true, "serviceName": true, "storeKey": true,
	"useTicketCache": true, "ticketCache": true, "doNotPrompt": true, "debug": true, "isInitiator": true,
	"renewTGT": true, "refreshKrb5Config": true,
}

func safeOption(key string) string {
	if knownOptions[key] || strings.HasPrefix(key, "unsecuredLogin") || strings.HasPrefix(key, "extension_") {
		return "'" + key + "'"
	}
	return "(name not shown)"
}

var knownContexts = map[string]bool{"KafkaClient": true, "KafkaServer": true, "Client": true, "Server": true}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*(\.[A-Za-z_$][A-Za-z0-9_$-]*)*$`)

// safeIdent quotes s if it looks like a qualified class name or a login
// context name and hides it otherwise, so that a secret that ended up where
// a name was expected is never echoed.
func safeIdent(s string) string {
	if len(s) <= 200 && identRE.MatchString(s) && (strings.Contains(s, ".") || knownContexts[s]) {
		return "'" + s + "'"
	}
	return "(a name that is not shown because it does not look like an identifier)"
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokChar // an ordinary character such as ';', '=', '{', '}'
)

type jaasToken struct {
	kind tokKind
	text string
	char rune
}

// jaasTokenizer reproduces the java.io.StreamTokenizer configuration of
// Kafka's JaasConfig: resetSyntax(); wordChars(32,128);
// wordChars(160,255); ordinaryChar(';'); ordinaryChar('=');
// whitespaceChars(0,' '); commentChar('/'); quoteChar('"');
// quoteChar('\”); slashSlashComments(true); slashStarComments(true).
// Characters above 255 are word characters, as in StreamTokenizer.
type jaasTokenizer struct {
	r      []rune
	pos    int
	braces bool // '{' and '}' are ordinary characters (JAAS files)
}

func newJAASTokenizer(s string) *jaasTokenizer { return &jaasTokenizer{r: []rune(s)} }

const (
	ctWhite = iota
	ctWord
	ctQuote
	ctComment
	ctOrdinary
)

func (t *jaasTokenizer) charType(c rune) int {
	if t.braces && (c == '{' || c == '}') {
		return ctOrdinary
	}
	switch {
	case c <= ' ':
		return ctWhite
	case c == '"' || c == '\'':
		return ctQuote
	case c == '/':
		return ctComment
	case c == ';' || c == '=':
		return ctOrdinary
	case c <= 128, c >= 160:
		return ctWord
	default: // 129..159
		return ctOrdinary
	}
}

func (t *jaasTokenizer) peek() (rune, bool) {
	if t.pos >= len(t.r) {
		return 0, false
	}
	return t.r[t.pos], true
}

func (t *jaasTokenizer) next() jaasToken {
	for {
		c, ok := t.peek()
		if !ok {
			return jaasToken{kind: tokEOF}
		}
		switch t.charType(c) {
		case ctWhite:
			t.pos++
			continue
		case ctWord:
			start := t.pos
			for t.pos < len(t.r) && t.charType(t.r[t.pos]) == ctWord {
				t.pos++
			}
			return jaasToken{kind: tokWord, text: string(t.r[start:t.pos])}
		case ctQuote:
			return t.quoted(c)
		case ctComment:
			t.pos++
			n, ok := t.peek()
			switch {
			case ok && n == '*':
				t.pos++
				// Skip to the closing "*/" (or to the end).
				for t.pos < len(t.r) {
					if t.r[t.pos] == '*' && t.pos+1 < len(t.r) && t.r[t.pos+1] == '/' {
						t.pos += 2
						break
					}
					t.pos++
				}
			default:
				// "//" or a lone '/' (the comment character): skip to the
				// end of the line.
				for t.pos < len(t.r) && t.r[t.pos] != '\n' && t.r[t.pos] != '\r' {
					t.pos++
				}
			}
			continue
		default:
			t.pos++
			return jaasToken{kind: tokChar, char: c}
		}
	}
}

// quoted reads a quoted string with StreamTokenizer's rules: the string
// ends at the matching quote, at an end of line, or at the end of input;
// backslash escapes \a \b \f \n \r \t \v, octal \0-\377, and \<any>.
func (t *jaasTokenizer) quoted(q rune) jaasToken {
	t.pos++ // opening quote
	var b strings.Builder
	for t.pos < len(t.r) {
		d := t.r[t.pos]
		if d == q {
			t.pos++
			break
		}
		if d == '\n' || d == '\r' {
			break // StreamTokenizer ends the string here without consuming the line end
		}
		t.pos++
		if d != '\\' {
			b.WriteRune(d)
			continue
		}
		if t.pos >= len(t.r) {
			b.WriteRune('\uffff') // Java: (char) -1
			break
		}
		c := t.r[t.pos]
		t.pos++
		if c >= '0' && c <= '7' {
			v := c - '0'
			if t.pos < len(t.r) && t.r[t.pos] >= '0' && t.r[t.pos] <= '7' {
				v = v<<3 + (t.r[t.pos] - '0')
				t.pos++
				if c <= '3' && t.pos < len(t.r) && t.r[t.pos] >= '0' && t.r[t.pos] <= '7' {
					v = v<<3 + (t.r[t.pos] - '0')
					t.pos++
				}
			}
			b.WriteRune(v)
			continue
		}
		switch c {
		case 'a':
			c = 7
		case 'b':
			c = '\b'
		case 'f':
			c = 0xC
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = 0xB
		}
		b.WriteRune(c)
	}
	return jaasToken{kind: tokQuoted, text: b.String()}
}
