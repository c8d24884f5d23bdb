package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Load reads the edgecore configuration at path on top of the defaults for
// host, normalises it for host.GOOS and validates it. It returns the values
// normalisation changed, for the caller to log. The error always names the
// file and, where it can, the field, the value and what to do about it.
func Load(path string, host Host) (*v1alpha2.EdgeCoreConfig, []Rewrite, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &MissingFileError{Path: path, GOOS: host.GOOS}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	return LoadBytes(raw, "config file "+path, host)
}

// LoadBytes is Load of a configuration already read, what names it in
// errors ("config file C:\..."): the same decoding, normalisation and
// checks, for a configuration that is not on disk yet (a ConfigUpdateJob's
// result, judged before it replaces the file).
func LoadBytes(raw []byte, what string, host Host) (*v1alpha2.EdgeCoreConfig, []Rewrite, error) {
	c, err := Parse(raw, host)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	rewrites := Normalize(c, host.GOOS)
	if errs := validateAll(c, host.GOOS); len(errs) > 0 {
		return nil, nil, &InvalidError{What: what, Errs: errs}
	}
	return c, rewrites, nil
}

// Parse decodes a configuration on top of the defaults for host. Unknown
// fields and values of the wrong kind are refused: a misspelt key would
// otherwise be dropped without a word and its default used instead.
func Parse(raw []byte, host Host) (*v1alpha2.EdgeCoreConfig, error) {
	text, err := DecodeText(raw)
	if err != nil {
		return nil, err
	}
	c, err := Sample(KindDefault, host)
	if err != nil {
		return nil, err
	}
	if err := decodeStrict(text, c); err != nil {
		return nil, err
	}
	return c, nil
}

// DecodeText turns a file an operator wrote into UTF-8. Windows PowerShell 5.1 writes
// "edgecore.exe --minconfig > edgecore.yaml" as UTF-16 with a byte-order mark;
// such a file is accepted rather than failing with a YAML syntax error.
func DecodeText(raw []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(raw, []byte{0xEF, 0xBB, 0xBF}):
		raw = raw[3:]
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		return fromUTF16(raw[2:], func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 })
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		return fromUTF16(raw[2:], func(b []byte) uint16 { return uint16(b[1]) | uint16(b[0])<<8 })
	}
	if !utf8.Valid(raw) {
		return nil, errors.New("the file is neither UTF-8 nor UTF-16 with a byte-order mark; save it as UTF-8")
	}
	return raw, nil
}

func fromUTF16(b []byte, unit func([]byte) uint16) ([]byte, error) {
	if len(b)%2 != 0 {
		return nil, errors.New("the file starts like UTF-16 but has an odd number of bytes; save it as UTF-8")
	}
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		units = append(units, unit(b[i:i+2]))
	}
	return []byte(string(utf16.Decode(units))), nil
}

// MissingFileError is returned when the configuration file does not exist.
type MissingFileError struct {
	Path string
	GOOS string
}

func (e *MissingFileError) Error() string {
	exe := ExecutableName(e.GOOS)
	return fmt.Sprintf("config file %s does not exist: create it from `%s --minconfig` "+
		"(or `%s --defaultconfig` for every field), or point --config at your file",
		e.Path, exe, exe)
}

// InvalidError lists every problem of a configuration or of the options it
// is made from, one a line.
type InvalidError struct {
	What string // "config file C:\...", "join options"
	Errs field.ErrorList
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not valid:", e.What)
	for _, err := range e.Errs {
		// Values are quoted as given: a URL's credentials must not
		// travel with them into logs and job statuses.
		fmt.Fprintf(&b, "\n  - %s", redact.String(err.Error()))
	}
	return b.String()
}
