package plugins

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Access flags of a class file (JVMS §4.1) that decide whether Connect's
// reflective scan can instantiate the class.
const (
	accPublic     = 0x0001
	accInterface  = 0x0200
	accAbstract   = 0x0400
	accAnnotation = 0x2000
	accEnum       = 0x4000
	accModule     = 0x8000
)

// classHeader is the start of a class file: enough to place the class in
// the type hierarchy (its superclass and interfaces) and to tell whether
// Connect could instantiate it (public, concrete), without the JVM.
type classHeader struct {
	name       string // dotted binary name: a.b.Outer$Inner
	super      string // "" for java.lang.Object and modules
	interfaces []string
	access     uint16
}

// instantiable reports what PluginUtils.isConcrete and the public-class
// rule of the scanners check: a public class that is neither an interface,
// abstract, an annotation, an enum nor a module descriptor. Connect also
// needs a public no-args constructor and a static nested class; both live
// past the header (methods, InnerClasses) and are not checked.
func (h *classHeader) instantiable() bool {
	const notPlugin = accInterface | accAbstract | accAnnotation | accEnum | accModule
	return h.access&accPublic != 0 && h.access&notPlugin == 0
}

// classScratch holds the buffers one goroutine reuses across class files,
// so that reading thousands of headers does not allocate per constant.
type classScratch struct {
	br        *bufio.Reader
	arena     []byte   // every Utf8 constant, back to back
	utf8      [][2]int // constant index -> arena offset, length (-1 if none)
	classRefs []int    // constant index -> Utf8 index of a Class constant
}

// readClassHeader reads a class file up to its interfaces table and stops:
// fields, methods and attributes are never read, so a compressed jar entry
// is inflated only as far as the header reaches.
func readClassHeader(r io.Reader, s *classScratch) (classHeader, error) {
	if s.br == nil {
		s.br = bufio.NewReaderSize(r, 2<<10) // small: the header is all that is inflated
	} else {
		s.br.Reset(r)
	}
	var head [10]byte
	if _, err := io.ReadFull(s.br, head[:]); err != nil {
		return classHeader{}, fmt.Errorf("read class header: %w", err)
	}
	if binary.BigEndian.Uint32(head[:4]) != 0xCAFEBABE {
		return classHeader{}, errors.New("not a class file (bad magic)")
	}
	count := int(binary.BigEndian.Uint16(head[8:10]))
	if err := s.readConstants(count); err != nil {
		return classHeader{}, err
	}
	return s.readTypes()
}

// readConstants reads the constant pool, keeping the Utf8 constants and
// which Utf8 each Class constant names.
func (s *classScratch) readConstants(count int) error {
	s.arena = s.arena[:0]
	s.utf8 = resize(s.utf8, count)
	s.classRefs = resizeInts(s.classRefs, count)
	var b [4]byte
	for i := 1; i < count; i++ {
		tag, err := s.br.ReadByte()
		if err != nil {
			return fmt.Errorf("read constant %d: %w", i, err)
		}
		switch tag {
		case 1: // Utf8
			if _, err := io.ReadFull(s.br, b[:2]); err != nil {
				return fmt.Errorf("read constant %d: %w", i, err)
			}
			n := int(binary.BigEndian.Uint16(b[:2]))
			off := len(s.arena)
			s.arena = slices.Grow(s.arena, n)[:off+n]
			if _, err := io.ReadFull(s.br, s.arena[off:]); err != nil {
				return fmt.Errorf("read constant %d: %w", i, err)
			}
			s.utf8[i] = [2]int{off, n}
		case 7: // Class
			if _, err := io.ReadFull(s.br, b[:2]); err != nil {
				return fmt.Errorf("read constant %d: %w", i, err)
			}
			s.classRefs[i] = int(binary.BigEndian.Uint16(b[:2]))
		case 5, 6: // Long, Double: 8 bytes and two slots
			if _, err := s.br.Discard(8); err != nil {
				return fmt.Errorf("read constant %d: %w", i, err)
			}
			i++
		default:
			n, ok := constantSize(tag)
			if !ok {
				return fmt.Errorf("constant %d: unknown tag %d", i, tag)
			}
			if _, err := s.br.Discard(n); err != nil {
				return fmt.Errorf("read constant %d: %w", i, err)
			}
		}
	}
	return nil
}

// constantSize is the payload size of the fixed-size constant pool entries
// (JVMS §4.4) the header reader skips.
func constantSize(tag byte) (int, bool) {
	switch tag {
	case 3, 4, 9, 10, 11, 12, 17, 18: // Integer, Float, refs, NameAndType, (Invoke)Dynamic
		return 4, true
	case 15: // MethodHandle
		return 3, true
	case 8, 16, 19, 20: // String, MethodType, Module, Package
		return 2, true
	}
	return 0, false
}

// readTypes reads access_flags, this_class, super_class and the interfaces.
func (s *classScratch) readTypes() (classHeader, error) {
	var b [8]byte
	if _, err := io.ReadFull(s.br, b[:8]); err != nil {
		return classHeader{}, fmt.Errorf("read class flags: %w", err)
	}
	h := classHeader{access: binary.BigEndian.Uint16(b[0:2])}
	var err error
	if h.name, err = s.className(int(binary.BigEndian.Uint16(b[2:4]))); err != nil {
		return classHeader{}, fmt.Errorf("this_class: %w", err)
	}
	if super := int(binary.BigEndian.Uint16(b[4:6])); super != 0 {
		if h.super, err = s.className(super); err != nil {
			return classHeader{}, fmt.Errorf("super_class: %w", err)
		}
	}
	n := int(binary.BigEndian.Uint16(b[6:8]))
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(s.br, b[:2]); err != nil {
			return classHeader{}, fmt.Errorf("read interfaces: %w", err)
		}
		name, err := s.className(int(binary.BigEndian.Uint16(b[:2])))
		if err != nil {
			return classHeader{}, fmt.Errorf("interface %d: %w", i, err)
		}
		h.interfaces = append(h.interfaces, name)
	}
	return h, nil
}

// className resolves a Class constant to its dotted binary name.
func (s *classScratch) className(idx int) (string, error) {
	if idx <= 0 || idx >= len(s.classRefs) || s.classRefs[idx] <= 0 || s.classRefs[idx] >= len(s.utf8) {
		return "", fmt.Errorf("bad class constant %d", idx)
	}
	u := s.utf8[s.classRefs[idx]]
	if u[0] < 0 {
		return "", fmt.Errorf("class constant %d names no Utf8 constant", idx)
	}
	return strings.ReplaceAll(string(s.arena[u[0]:u[0]+u[1]]), "/", "."), nil
}

// resize returns a slice of n entries, all {-1, 0}, reusing s.
func resize(s [][2]int, n int) [][2]int {
	if cap(s) < n {
		s = make([][2]int, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = [2]int{-1, 0}
	}
	return s
}

// resizeInts returns a slice of n zeros, reusing s.
func resizeInts(s []int, n int) []int {
	if cap(s) < n {
		s = make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}
