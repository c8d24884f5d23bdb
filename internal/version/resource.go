package version

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
)

// versionResource is the string table of a PE file's version resource
// (VS_VERSIONINFO), as Explorer's Details tab shows it.
type versionResource struct {
	ProductName    string
	ProductVersion string
	FileVersion    string
}

// Resource types and the data directory of the resources (winnt.h).
const (
	rtVersion         = 16
	dirEntryResource  = 2
	resourceDirHeader = 16
	resourceDirEntry  = 8
	subdirectoryBit   = 0x80000000
	maxResourceDepth  = 3
)

// readVersionResource reads the version resource of the PE file at path.
func readVersionResource(path string) (versionResource, error) {
	f, err := pe.Open(path)
	if err != nil {
		return versionResource{}, fmt.Errorf("not a Windows program (%v), so it has no version resource", err)
	}
	defer f.Close()
	var dir pe.DataDirectory
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		if h.NumberOfRvaAndSizes > dirEntryResource {
			dir = h.DataDirectory[dirEntryResource]
		}
	case *pe.OptionalHeader32:
		if h.NumberOfRvaAndSizes > dirEntryResource {
			dir = h.DataDirectory[dirEntryResource]
		}
	}
	if dir.VirtualAddress == 0 || dir.Size == 0 {
		return versionResource{}, errNoResource
	}
	var sec *pe.Section
	for _, s := range f.Sections {
		if dir.VirtualAddress >= s.VirtualAddress && dir.VirtualAddress < s.VirtualAddress+max(s.VirtualSize, s.Size) {
			sec = s
			break
		}
	}
	if sec == nil {
		return versionResource{}, errors.New("its resource directory lies in no section")
	}
	data, err := sec.Data()
	if err != nil {
		return versionResource{}, fmt.Errorf("reading its resources: %w", err)
	}
	base := dir.VirtualAddress - sec.VirtualAddress
	if int(base) >= len(data) {
		return versionResource{}, errors.New("its resource directory lies outside its section")
	}
	rsrc := data[base:]
	// The tree is type, then name, then language: the first version
	// resource of the first language, as Windows' GetFileVersionInfo
	// takes without a language.
	off, err := resourceChild(rsrc, 0, rtVersion)
	for depth := 1; err == nil && off&subdirectoryBit != 0 && depth < maxResourceDepth; depth++ {
		off, err = resourceChild(rsrc, off&^subdirectoryBit, -1)
	}
	if errors.Is(err, errNoEntry) {
		return versionResource{}, errNoResource
	}
	if err != nil {
		return versionResource{}, err
	}
	if off&subdirectoryBit != 0 || int(off)+16 > len(rsrc) {
		return versionResource{}, errors.New("its version resource is malformed")
	}
	rva := binary.LittleEndian.Uint32(rsrc[off:])
	size := binary.LittleEndian.Uint32(rsrc[off+4:])
	start := int64(rva) - int64(sec.VirtualAddress)
	if start < 0 || start+int64(size) > int64(len(data)) {
		return versionResource{}, errors.New("its version resource lies outside its section")
	}
	return parseVersionInfo(data[start : start+int64(size)])
}

var errNoEntry = errors.New("no such resource")

// resourceChild finds, in the resource directory at off, the entry with
// the numeric id (any entry for id < 0), and returns its offset field.
func resourceChild(rsrc []byte, off uint32, id int) (uint32, error) {
	if int(off)+resourceDirHeader > len(rsrc) {
		return 0, errors.New("its resource directory is truncated")
	}
	named := binary.LittleEndian.Uint16(rsrc[off+12:])
	ids := binary.LittleEndian.Uint16(rsrc[off+14:])
	n := int(named) + int(ids)
	for i := 0; i < n; i++ {
		e := int(off) + resourceDirHeader + i*resourceDirEntry
		if e+resourceDirEntry > len(rsrc) {
			return 0, errors.New("its resource directory is truncated")
		}
		name := binary.LittleEndian.Uint32(rsrc[e:])
		if id >= 0 && (name&subdirectoryBit != 0 || name != uint32(id)) {
			continue
		}
		return binary.LittleEndian.Uint32(rsrc[e+4:]), nil
	}
	return 0, errNoEntry
}

// block is one node of a VS_VERSIONINFO tree: wLength, wValueLength,
// wType, a NUL-terminated UTF-16 key, padding to 32 bits, the value,
// padding, and the children.
type block struct {
	key      string
	value    []byte
	text     bool
	children []block
}

func parseBlock(b []byte) (block, int, error) {
	if len(b) < 6 {
		return block{}, 0, errors.New("its version resource is truncated")
	}
	length := int(binary.LittleEndian.Uint16(b))
	valueLength := int(binary.LittleEndian.Uint16(b[2:]))
	text := binary.LittleEndian.Uint16(b[4:]) == 1
	if length < 6 || length > len(b) {
		return block{}, 0, errors.New("its version resource has a block longer than itself")
	}
	b = b[:length]
	key, n := utf16String(b[6:])
	blk := block{key: key, text: text}
	pos := align4(6 + n)
	if text {
		valueLength *= 2
	}
	if valueLength > 0 {
		if pos+valueLength > len(b) {
			// Some writers count the value's WORDs loosely; take what
			// the block holds.
			valueLength = len(b) - pos
		}
		if valueLength > 0 {
			blk.value = b[pos : pos+valueLength]
		}
		pos = align4(pos + valueLength)
	}
	for pos < len(b) {
		c, used, err := parseBlock(b[pos:])
		if err != nil {
			return block{}, 0, err
		}
		blk.children = append(blk.children, c)
		pos = align4(pos + used)
	}
	return blk, length, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// utf16String reads a NUL-terminated UTF-16LE string and the bytes it
// took with its NUL.
func utf16String(b []byte) (string, int) {
	var units []uint16
	i := 0
	for ; i+1 < len(b); i += 2 {
		u := binary.LittleEndian.Uint16(b[i:])
		if u == 0 {
			return string(utf16.Decode(units)), i + 2
		}
		units = append(units, u)
	}
	return string(utf16.Decode(units)), i
}

func parseVersionInfo(b []byte) (versionResource, error) {
	root, _, err := parseBlock(b)
	if err != nil {
		return versionResource{}, err
	}
	if root.key != "VS_VERSION_INFO" {
		return versionResource{}, fmt.Errorf("its version resource starts with %q, not VS_VERSION_INFO", root.key)
	}
	var r versionResource
	for _, sfi := range root.children {
		if sfi.key != "StringFileInfo" {
			continue
		}
		for _, table := range sfi.children {
			for _, s := range table.children {
				v, _ := utf16String(s.value)
				switch s.key {
				case "ProductName":
					r.ProductName = v
				case "ProductVersion":
					r.ProductVersion = v
				case "FileVersion":
					r.FileVersion = v
				}
			}
			// The first table (the first language) is the one read.
			return r, nil
		}
	}
	return versionResource{}, errors.New("its version resource has no string table")
}
