package workerconfig

import (
	"errors"
	"fmt"
	"os"
	"unicode/utf16"
	"unicode/utf8"
)

// Why not github.com/magiconair/properties: v1.18.13 departs from
// java.util.Properties where real files differ (see javaprops_test.go,
// TestMagiconairDeviations): it expands ${...} unless told not to (it would
// eat Connect's ${file:...} references), keeps "\<newline>" inside a key as a
// newline instead of joining the lines, ends a continued value at the "\n" of
// a "\r\n" pair (the rest becomes a new key), rejects an empty key ("=v"),
// fails on a backslash at the very end of the file instead of dropping it,
// turns \uD83D\uDE00 surrogate pairs into two U+FFFD, and strips a UTF-8 BOM
// that Java keeps. This file therefore implements the JDK 17 algorithm
// (Properties.LineReader.readLine, Properties.load0, Properties.loadConvert)
// directly; its results are compared with a real JVM's on a tricky corpus
// (testdata/tricky*.properties, expected output from testdata/Dump.java).

// Parse reads Java .properties text exactly as connect-distributed reads its
// worker file (Utils.loadProps -> Properties.load(InputStream)): bytes are
// ISO-8859-1, escapes, ':' '=' and blank separators, line continuations,
// \uXXXX escapes and '#'/'!' comments follow java.util.Properties of JDK 17.
// Nothing is expanded: ${...} stays literal for the config-provider step.
// A later duplicate key wins. The only error is a malformed \uXXXX escape,
// which makes Java throw IllegalArgumentException (the worker would not
// start); the error names the line.
func Parse(data []byte) (Properties, error) {
	p, _, err := ParseLines(data)
	return p, err
}

// ParseLines is Parse that also returns, for each key, the physical line
// (1-based) of the logical line that last set it, so that messages and
// `connect-init config` can say file:line.
func ParseLines(data []byte) (Properties, map[string]int, error) {
	units := make([]uint16, len(data))
	for i, b := range data {
		units[i] = uint16(b)
	}
	lines := map[string]int{}
	p, err := parseUnits(units, lines)
	return p, lines, err
}

// parseUTF8 reads .properties text the way FileConfigProvider does
// (Files.newBufferedReader(path, UTF_8) -> Properties.load(Reader)): the
// decoder is strict, so malformed UTF-8 is an error, and a BOM is kept as
// U+FEFF at the start of the first key.
func parseUTF8(data []byte) (Properties, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the file is not valid UTF-8 (Java's strict decoder rejects it)")
	}
	return parseUnits(utf16.Encode([]rune(string(data))), nil)
}

// ReadFile reads a worker properties file as connect-distributed does (see
// Parse). Errors name the file.
func ReadFile(path string) (Properties, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading worker properties file: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("worker properties file %s: %w", path, err)
	}
	return p, nil
}

// lineReader is Properties.LineReader of JDK 17: it yields logical lines
// (continuations joined, comments and blank lines skipped).
type lineReader struct {
	in     []uint16
	off    int
	line   int // physical line number (1-based) of the current position
	skipLF bool
}

// readLine returns the next logical line and the physical line it started
// on; ok is false at the end of input. Its states are JDK 17's: blanks
// skipped at the start of a line (and after a continuation, where a line
// end is kept), comments skipped, and a backslash before a line end
// joining the next line.
func (lr *lineReader) readLine() (buf []uint16, startLine int, ok bool) {
	ll := logicalLine{skipWhiteSpace: true, startLine: lr.line}
	for {
		c, more := lr.next()
		if !more {
			if len(ll.buf) == 0 {
				return nil, 0, false
			}
			return dropBackslash(ll.buf, ll.precedingBackslash), ll.startLine, true
		}
		if lr.skipLF {
			lr.skipLF = false
			if c == '\n' {
				continue
			}
		}
		if ll.skipsLeading(c) {
			continue
		}
		if len(ll.buf) == 0 { // still at the start of a logical line
			ll.startLine = lr.line
			if c == '#' || c == '!' {
				if !lr.skipComment() {
					return nil, 0, false
				}
				ll.skipWhiteSpace = true
				continue
			}
		}
		if c != '\n' && c != '\r' {
			ll.buf = append(ll.buf, c)
			ll.precedingBackslash = c == '\\' && !ll.precedingBackslash
			continue
		}
		if lr.endPhysicalLine(&ll, c) {
			return ll.buf, ll.startLine, true
		}
	}
}

// logicalLine is readLine's state while it assembles one logical line,
// named as in JDK 17's LineReader so the two can be compared.
type logicalLine struct {
	buf                []uint16
	startLine          int
	skipWhiteSpace     bool
	appendedLineBegin  bool
	precedingBackslash bool
}

// skipsLeading reports whether c is to be skipped as a blank at the start
// of a line (or a line end, unless after a continuation); the first other
// character ends the skipping.
func (ll *logicalLine) skipsLeading(c uint16) bool {
	if !ll.skipWhiteSpace {
		return false
	}
	if c == ' ' || c == '\t' || c == '\f' {
		return true
	}
	if !ll.appendedLineBegin && (c == '\r' || c == '\n') {
		return true
	}
	ll.skipWhiteSpace = false
	ll.appendedLineBegin = false
	return false
}

// endPhysicalLine handles the line end c: it reports whether ll is a
// complete logical line, and otherwise prepares ll for the next physical
// line (after a blank line, or joining it after a continuation backslash).
func (lr *lineReader) endPhysicalLine(ll *logicalLine, c uint16) bool {
	if len(ll.buf) == 0 {
		ll.skipWhiteSpace = true
		return false
	}
	if lr.off >= len(lr.in) {
		ll.buf = dropBackslash(ll.buf, ll.precedingBackslash)
		return true
	}
	if !ll.precedingBackslash {
		return true
	}
	// The backslash joins the next line; its leading blanks go, and
	// so does the '\n' of a "\r\n".
	ll.buf = ll.buf[:len(ll.buf)-1]
	ll.skipWhiteSpace, ll.appendedLineBegin, ll.precedingBackslash = true, true, false
	lr.skipLF = c == '\r'
	return false
}

// next consumes one code unit and counts physical lines as Java's line
// numbers would: at a '\n', or a '\r' not followed by '\n'. ok is false
// at the end of input.
func (lr *lineReader) next() (c uint16, ok bool) {
	if lr.off >= len(lr.in) {
		return 0, false
	}
	c = lr.in[lr.off]
	lr.off++
	if c == '\n' || (c == '\r' && (lr.off >= len(lr.in) || lr.in[lr.off] != '\n')) {
		lr.line++
	}
	return c, true
}

// skipComment consumes a comment up to and including the next '\r' or
// '\n' (a continuation backslash means nothing in a comment); it is false
// when the input ends first.
func (lr *lineReader) skipComment() bool {
	for {
		c, ok := lr.next()
		if !ok {
			return false
		}
		if c == '\n' || c == '\r' {
			return true
		}
	}
}

// dropBackslash drops the odd backslash that ends the input: Java's
// continuation that has no next line to join.
func dropBackslash(buf []uint16, precedingBackslash bool) []uint16 {
	if precedingBackslash {
		return buf[:len(buf)-1]
	}
	return buf
}

// parseUnits is Properties.load0 over UTF-16 code units.
func parseUnits(in []uint16, lines map[string]int) (Properties, error) {
	p := Properties{}
	lr := &lineReader{in: in, line: 1}
	for {
		line, lineNo, ok := lr.readLine()
		if !ok {
			return p, nil
		}
		limit := len(line)
		keyLen, valueStart := 0, limit
		hasSep, precedingBackslash := false, false
		for keyLen < limit {
			c := line[keyLen]
			if (c == '=' || c == ':') && !precedingBackslash {
				valueStart = keyLen + 1
				hasSep = true
				break
			} else if (c == ' ' || c == '\t' || c == '\f') && !precedingBackslash {
				valueStart = keyLen + 1
				break
			}
			if c == '\\' {
				precedingBackslash = !precedingBackslash
			} else {
				precedingBackslash = false
			}
			keyLen++
		}
		for valueStart < limit {
			c := line[valueStart]
			if c != ' ' && c != '\t' && c != '\f' {
				if !hasSep && (c == '=' || c == ':') {
					hasSep = true
				} else {
					break
				}
			}
			valueStart++
		}
		key, err := loadConvert(line[:keyLen])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		value, err := loadConvert(line[valueStart:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		p[key] = value
		if lines != nil {
			lines[key] = lineNo
		}
	}
}

// errMalformedUnicode is Java's "Malformed \uxxxx encoding." exception.
var errMalformedUnicode = errors.New(`malformed \uxxxx escape (Java refuses the whole file)`)

// loadConvert is Properties.loadConvert: it resolves escapes. \uXXXX yields
// one UTF-16 code unit, so escaped surrogate pairs combine as in Java; an
// unpaired surrogate becomes U+FFFD (Java would keep it and later encode it
// as '?').
func loadConvert(in []uint16) (string, error) {
	out := make([]uint16, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		i++
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i >= len(in) {
			// Cannot happen for lines from readLine (an odd trailing
			// backslash is dropped there); kept for safety.
			break
		}
		c = in[i]
		i++
		switch c {
		case 'u':
			if i+4 > len(in) {
				return "", errMalformedUnicode
			}
			var v uint16
			for _, d := range in[i : i+4] {
				switch {
				case d >= '0' && d <= '9':
					v = v<<4 + d - '0'
				case d >= 'a' && d <= 'f':
					v = v<<4 + 10 + d - 'a'
				case d >= 'A' && d <= 'F':
					v = v<<4 + 10 + d - 'A'
				default:
					return "", errMalformedUnicode
				}
			}
			i += 4
			out = append(out, v)
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		case 'f':
			out = append(out, '\f')
		default:
			out = append(out, c)
		}
	}
	return string(utf16.Decode(out)), nil
}
