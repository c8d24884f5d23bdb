package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unicode/utf16"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2/validation"
)

// Load reads the edgecore configuration at path on top of the defaults and
// validates it. The error always names the file and, where it can, the field
// and what to do about it.
func Load(path, goos string) (*v1alpha2.EdgeCoreConfig, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingFileError{Path: path, GOOS: goos}
	}
	if err != nil {
		return nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if errs := validation.ValidateEdgeCoreConfiguration(c); len(errs) > 0 {
		return nil, fmt.Errorf("config file %s is not valid: %w", path, errs.ToAggregate())
	}
	return c, nil
}

// Parse decodes a configuration on top of upstream's defaults. Unknown fields
// are refused: a misspelt key would otherwise be dropped without a word and
// its default used instead.
func Parse(raw []byte) (*v1alpha2.EdgeCoreConfig, error) {
	text, err := decodeText(raw)
	if err != nil {
		return nil, err
	}
	c := v1alpha2.NewDefaultEdgeCoreConfig()
	if err := yaml.UnmarshalStrict(text, c); err != nil {
		return nil, fmt.Errorf("%w (check the spelling and indentation of that field against --defaultconfig)", err)
	}
	return c, nil
}

// decodeText turns the file into UTF-8. Windows PowerShell 5.1 writes
// "edgecore.exe --minconfig > edgecore.yaml" as UTF-16 with a byte-order mark;
// such a file is accepted rather than failing with a YAML syntax error.
func decodeText(raw []byte) ([]byte, error) {
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
