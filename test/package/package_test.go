//go:build package

// Package pkgtest checks the release zip the way an operator receiving it
// would: its files, their checksums, the licenses and the version
// information Windows Explorer shows for edgecore.exe. `make package-test`
// builds the zip and runs this.
package pkgtest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/release"
)

func openPackage(t *testing.T) (map[string][]byte, string) {
	t.Helper()
	path, version := os.Getenv("PACKAGE_ZIP"), os.Getenv("VERSION")
	if path == "" || version == "" {
		t.Fatal("PACKAGE_ZIP and VERSION are not set: run `make package-test`")
	}
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	prefix := "edgecore-" + version + "-windows-amd64/"
	files := map[string][]byte{}
	for _, f := range r.File {
		if !strings.HasPrefix(f.Name, prefix) {
			t.Errorf("%s lies outside the package's top directory %s", f.Name, prefix)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(f.Name, prefix)] = data
	}
	return files, version
}

func TestPackageContents(t *testing.T) {
	files, _ := openPackage(t)
	for _, name := range []string{"edgecore.exe", "edgecore.sample.yaml", "QUICKSTART.txt", "LICENSE", "NOTICE", "SHA256SUMS",
		"licenses/github.com_kubeedge_kubeedge.txt", "licenses/k8s.io_kubernetes.txt", "licenses/github.com_mattn_go-sqlite3.txt"} {
		if len(files[name]) == 0 {
			t.Errorf("the package has no (or an empty) %s", name)
		}
	}
	if !bytes.Contains(files["licenses/github.com_kubeedge_kubeedge.txt"], []byte("Apache License")) {
		t.Error("KubeEdge's license in the package is not the Apache License")
	}
	for _, want := range []string{"edgecore.exe preflight", "keadm gettoken", "edgecore.exe join", "--cluster-cidr"} {
		if !bytes.Contains(files["QUICKSTART.txt"], []byte(want)) {
			t.Errorf("QUICKSTART.txt does not mention %q", want)
		}
	}
	// The sample is a Windows configuration that loads as it is.
	p := t.TempDir() + "/edgecore.yaml"
	if err := os.WriteFile(p, files["edgecore.sample.yaml"], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, rewrites, err := config.Load(p, config.Host{GOOS: config.Windows}); err != nil || len(rewrites) != 0 {
		t.Errorf("the sample configuration does not load cleanly on Windows: %v %v", err, rewrites)
	}
}

// The package passes the checks `edgecore.exe upgrade --package` and the
// NodeUpgradeJob executor make, and its manifest names this build.
func TestUpgradeAcceptsThePackage(t *testing.T) {
	_, version := openPackage(t)
	p, err := release.Open(os.Getenv("PACKAGE_ZIP"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := p.Manifest
	if m.Version != version || m.Platform() != "windows/amd64" || m.Binary != "edgecore.exe" || !strings.HasPrefix(m.KubeEdge, "v1.") {
		t.Errorf("manifest.json: %+v", m)
	}
	exe := t.TempDir() + "/edgecore.exe"
	if err := p.Extract(m.Binary, exe); err != nil {
		t.Fatal(err)
	}
	if err := release.CheckBinary(exe, m); err != nil {
		t.Error(err)
	}
}

func TestChecksums(t *testing.T) {
	files, _ := openPackage(t)
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(files["SHA256SUMS"])), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not in sha256sum's format", line)
		}
		got := sha256.Sum256(files[name])
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("SHA256SUMS: %s does not match", name)
		}
		listed[name] = true
	}
	for name := range files {
		if name != "SHA256SUMS" && !listed[name] {
			t.Errorf("%s is not in SHA256SUMS", name)
		}
	}
}

// Every module compiled into edgecore.exe has its license in the package.
func TestLicensesCoverEveryModule(t *testing.T) {
	files, _ := openPackage(t)
	exe := t.TempDir() + "/edgecore.exe"
	if err := os.WriteFile(exe, files["edgecore.exe"], 0o600); err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, dep := range bi.Deps {
		name := "licenses/" + strings.ReplaceAll(dep.Path, "/", "_") + ".txt"
		if len(files[name]) == 0 {
			missing = append(missing, dep.Path)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no license in the package for %d modules: %v", len(missing), missing)
	}
	if len(bi.Deps) < 50 {
		t.Errorf("only %d modules recorded in edgecore.exe", len(bi.Deps))
	}
}

// The version resource is what Explorer's Details tab and PowerShell's
// (Get-Item edgecore.exe).VersionInfo show.
func TestVersionResource(t *testing.T) {
	files, version := openPackage(t)
	f, err := pe.NewFile(bytes.NewReader(files["edgecore.exe"]))
	if err != nil {
		t.Fatalf("edgecore.exe is not a PE file: %v", err)
	}
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		t.Errorf("machine %#x, want x86-64", f.Machine)
	}
	info, err := versionInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	num := strings.SplitN(strings.TrimPrefix(version, "v"), "-", 2)[0]
	want := fmt.Sprintf("%s.0", num)
	if info.fixedFileVersion != want {
		t.Errorf("fixed file version %s, want %s", info.fixedFileVersion, want)
	}
	// The strings carry the whole version, pre-release included: upgrade
	// and takeover read it from ProductVersion without running the file.
	for key, value := range map[string]string{
		"ProductName":      "edgecore for Windows",
		"FileVersion":      version,
		"ProductVersion":   version,
		"OriginalFilename": "edgecore.exe",
	} {
		if got, ok := info.value(key); !ok || got != value {
			t.Errorf("version string %s is %q, want %q", key, got, value)
		}
	}
}

type version struct {
	fixedFileVersion string
	strings          string // the UTF-16 text of the resource, decoded
}

// value is the string the table gives key: the next text after the key's
// NUL terminator and padding, as the resource lays a String block out.
func (v version) value(key string) (string, bool) {
	var words []string
	for _, w := range strings.Split(v.strings, "\x00") {
		if w != "" {
			words = append(words, w)
		}
	}
	for i, w := range words {
		if strings.HasSuffix(w, key) && i+1 < len(words) {
			return words[i+1], true
		}
	}
	return "", false
}

// versionInfo finds the RT_VERSION resource by walking the resource
// directory of the .rsrc section: type, then name, then language.
func versionInfo(f *pe.File) (version, error) {
	sec := f.Section(".rsrc")
	if sec == nil {
		return version{}, fmt.Errorf("edgecore.exe has no .rsrc section")
	}
	data, err := sec.Data()
	if err != nil {
		return version{}, err
	}
	const rtVersion = 16
	entry := func(dir uint32, id uint32, any bool) (uint32, bool) {
		named := binary.LittleEndian.Uint16(data[dir+12:])
		ids := binary.LittleEndian.Uint16(data[dir+14:])
		for i := uint32(0); i < uint32(named)+uint32(ids); i++ {
			e := dir + 16 + 8*i
			if any || binary.LittleEndian.Uint32(data[e:]) == id {
				return binary.LittleEndian.Uint32(data[e+4:]), true
			}
		}
		return 0, false
	}
	off, ok := entry(0, rtVersion, false)
	if !ok {
		return version{}, fmt.Errorf("edgecore.exe has no version resource")
	}
	for level := 0; level < 2; level++ {
		if off&0x80000000 == 0 {
			return version{}, fmt.Errorf("malformed resource directory")
		}
		if off, ok = entry(off&0x7fffffff, 0, true); !ok {
			return version{}, fmt.Errorf("empty resource directory")
		}
	}
	rva := binary.LittleEndian.Uint32(data[off:])
	size := binary.LittleEndian.Uint32(data[off+4:])
	res := data[rva-sec.VirtualAddress : rva-sec.VirtualAddress+size]
	i := bytes.Index(res, []byte{0xbd, 0x04, 0xef, 0xfe})
	if i < 0 {
		return version{}, fmt.Errorf("version resource without VS_FIXEDFILEINFO")
	}
	ms := binary.LittleEndian.Uint32(res[i+8:])
	ls := binary.LittleEndian.Uint32(res[i+12:])
	v := version{fixedFileVersion: fmt.Sprintf("%d.%d.%d.%d", ms>>16, ms&0xffff, ls>>16, ls&0xffff)}
	units := make([]uint16, len(res)/2)
	for j := range units {
		units[j] = binary.LittleEndian.Uint16(res[2*j:])
	}
	v.strings = string(utf16.Decode(units))
	return v, nil
}
