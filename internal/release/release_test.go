package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// fakePE is the smallest file debug/pe reads: a DOS header pointing at a
// PE signature and a COFF header naming machine, with no sections.
func fakePE(machine uint16) []byte {
	var b bytes.Buffer
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	binary.Write(&b, binary.LittleEndian, pe.FileHeader{Machine: machine})
	// debug/pe reads 96 bytes of DOS header whatever the file says.
	b.Write(make([]byte, 64))
	return b.Bytes()
}

type pkgSpec struct {
	top      string            // default: the manifest's TopDir
	manifest *Manifest         // nil: none
	files    map[string][]byte // besides the manifest and SHA256SUMS
	noSums   bool
	// editSums changes SHA256SUMS after it is computed.
	editSums func(string) string
}

func manifest(v, goos, arch string) *Manifest {
	return &Manifest{Name: Name, Version: v, OS: goos, Arch: arch, KubeEdge: "v1.20.0", Binary: "edgecore.exe"}
}

// writePackage builds a zip the way build/package.sh does and returns its
// path, in a directory with a space in its name.
func writePackage(t *testing.T, s pkgSpec) string {
	t.Helper()
	files := map[string][]byte{}
	for k, v := range s.files {
		files[k] = v
	}
	top := s.top
	if s.manifest != nil {
		data, _ := json.Marshal(s.manifest)
		files[ManifestFile] = data
		if top == "" {
			top = s.manifest.TopDir()
		}
	}
	if top == "" {
		top = "edgecore-v0.2.0-windows-amd64"
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if !s.noSums {
		var sums strings.Builder
		for _, n := range names {
			h := sha256.Sum256(files[n])
			fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), n)
		}
		text := sums.String()
		if s.editSums != nil {
			text = s.editSums(text)
		}
		files[SumsFile] = []byte(text)
		names = append(names, SumsFile)
	}
	dir := filepath.Join(t.TempDir(), "release packages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, top+".zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		name := n
		if !strings.HasPrefix(n, "/") && !strings.HasPrefix(n, "..") && !strings.Contains(n, "\\") && !strings.HasPrefix(n, "!") {
			name = top + "/" + n
		} else {
			name = strings.TrimPrefix(n, "!")
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func goodFiles() map[string][]byte {
	return map[string][]byte{
		"edgecore.exe":           fakePE(pe.IMAGE_FILE_MACHINE_AMD64),
		"LICENSE":                []byte("Apache License"),
		"licenses/x_y_z.txt":     []byte("MIT"),
		"edgecore.sample.yaml":   []byte("kind: EdgeCore\n"),
		"QUICKSTART.txt":         []byte("edgecore.exe join"),
		"dir with space/a b.txt": []byte("spaces"),
	}
}

func TestOpenAcceptsAPackageAndExtractsItsBinary(t *testing.T) {
	path := writePackage(t, pkgSpec{manifest: manifest("v0.2.0", "windows", "amd64"), files: goodFiles()})
	p, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Manifest.Version != "v0.2.0" || p.Manifest.Platform() != "windows/amd64" {
		t.Errorf("manifest %+v", p.Manifest)
	}
	dst := filepath.Join(t.TempDir(), "Program Files", "edgecore", "edgecore.exe")
	if err := p.Extract("edgecore.exe", dst); err != nil {
		t.Fatal(err)
	}
	if err := CheckBinary(dst, p.Manifest); err != nil {
		t.Errorf("CheckBinary: %v", err)
	}
	if _, err := os.Stat(dst + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial file stayed behind: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	m := manifest("v0.2.0", "windows", "amd64")
	changed := goodFiles()
	for _, tc := range []struct {
		name string
		spec pkgSpec
		want string
	}{
		{"not a zip", pkgSpec{}, "cannot read it as a zip"},
		{"no sums", pkgSpec{manifest: m, files: goodFiles(), noSums: true}, "has no edgecore-v0.2.0-windows-amd64/SHA256SUMS"},
		{"a file changed", pkgSpec{manifest: m, files: changed, editSums: func(s string) string {
			h := sha256.Sum256([]byte("other"))
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				if strings.HasSuffix(l, "  edgecore.exe") {
					lines[i] = hex.EncodeToString(h[:]) + "  edgecore.exe"
				}
			}
			return strings.Join(lines, "\n")
		}}, "edgecore.exe does not match SHA256SUMS"},
		{"a file not listed", pkgSpec{manifest: m, files: goodFiles(), editSums: func(s string) string {
			var keep []string
			for _, l := range strings.Split(s, "\n") {
				if !strings.HasSuffix(l, "  LICENSE") {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
		}}, "does not list LICENSE"},
		{"a listed file missing", pkgSpec{manifest: m, files: goodFiles(), editSums: func(s string) string {
			return s + strings.Repeat("a", 64) + "  gone.txt\n"
		}}, "lists gone.txt, which the package does not hold"},
		{"malformed sums", pkgSpec{manifest: m, files: goodFiles(), editSums: func(s string) string { return s + "nonsense\n" }}, "is not \"<sha256>  <file>\""},
		{"no manifest", pkgSpec{top: "edgecore-v0.2.0-windows-amd64", files: goodFiles()}, "has no edgecore-v0.2.0-windows-amd64/manifest.json"},
		{"renamed directory", pkgSpec{top: "edgecore-v0.3.0-windows-amd64", manifest: m, files: goodFiles()}, "but the package's directory is edgecore-v0.3.0-windows-amd64"},
		{"escaping entry", pkgSpec{manifest: m, files: map[string][]byte{"edgecore.exe": fakePE(pe.IMAGE_FILE_MACHINE_AMD64), "!edgecore-v0.2.0-windows-amd64/../evil.exe": []byte("x")}}, "refusing a package that could write outside its directory"},
		{"two top directories", pkgSpec{manifest: m, files: map[string][]byte{"edgecore.exe": fakePE(pe.IMAGE_FILE_MACHINE_AMD64), "!other/x": []byte("x")}}, "entries lie in both"},
		{"no binary", pkgSpec{manifest: m, files: map[string][]byte{"LICENSE": []byte("x")}}, "names the binary edgecore.exe, which the package does not hold"},
		{"not edgecore", pkgSpec{manifest: &Manifest{Name: "other", Version: "v0.2.0", OS: "windows", Arch: "amd64", Binary: "edgecore.exe"}, top: "edgecore-v0.2.0-windows-amd64", files: goodFiles()}, "this is not an edgecore package"},
		{"bad version", pkgSpec{manifest: manifest("latest", "windows", "amd64"), files: goodFiles()}, "is not a semantic version"},
		{"escape in kubeedge", pkgSpec{manifest: &Manifest{Name: Name, Version: "v0.2.0", OS: "windows", Arch: "amd64", KubeEdge: "v1.20.0\x1b[2J\rSUCCESS", Binary: "edgecore.exe"}, files: goodFiles()},
			`kubeedge "v1.20.0\x1b[2J\rSUCCESS" holds the control character U+001B`},
		{"version with spaces", pkgSpec{top: "edgecore- v0.2.0-windows-amd64", manifest: manifest(" v0.2.0", "windows", "amd64"), files: goodFiles()}, `version " v0.2.0" has spaces around it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path string
			if tc.name == "not a zip" {
				path = filepath.Join(t.TempDir(), "edgecore v0.2.0.zip")
				os.WriteFile(path, []byte("not a zip"), 0o644)
			} else {
				path = writePackage(t, tc.spec)
			}
			p, err := Open(path)
			if err == nil {
				p.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q\nwant it to name %s and say %q", err, path, tc.want)
			}
		})
	}
}

func TestCheckBinaryRefusesAnotherArchitecture(t *testing.T) {
	dir := t.TempDir()
	arm := filepath.Join(dir, "edgecore.exe")
	os.WriteFile(arm, fakePE(pe.IMAGE_FILE_MACHINE_ARM64), 0o755)
	err := CheckBinary(arm, *manifest("v0.2.0", "windows", "amd64"))
	if err == nil || !strings.Contains(err.Error(), "built for arm64, but the manifest says windows/amd64") {
		t.Errorf("got %v", err)
	}
	text := filepath.Join(dir, "edgecore.bat")
	os.WriteFile(text, []byte("@echo off"), 0o755)
	if err := CheckBinary(text, *manifest("v0.2.0", "windows", "amd64")); err == nil || !strings.Contains(err.Error(), "not a Windows executable") {
		t.Errorf("got %v", err)
	}
	// The test binary is a Go program whose build information names its
	// platform.
	self, _ := os.Executable()
	if runtime.GOOS == "linux" {
		if err := CheckBinary(self, *manifest("v0.2.0", runtime.GOOS, runtime.GOARCH)); err != nil {
			t.Errorf("the test binary for its own platform: %v", err)
		}
	}
}

func TestCheck(t *testing.T) {
	host := Target{OS: "windows", Arch: "amd64", Installed: "v0.2.0"}
	for _, tc := range []struct {
		name   string
		m      *Manifest
		target func(Target) Target
		want   string // "" accepted, "same" ErrSameVersion
	}{
		{"newer", manifest("v0.3.0", "windows", "amd64"), nil, ""},
		{"prerelease of a newer", manifest("v0.3.0-rc.1", "windows", "amd64"), nil, ""},
		{"same", manifest("v0.2.0", "windows", "amd64"), nil, "same"},
		{"older", manifest("v0.1.0", "windows", "amd64"), nil, "older than the installed v0.2.0: pass --allow-downgrade"},
		{"older allowed", manifest("v0.1.0", "windows", "amd64"), func(t Target) Target { t.AllowDowngrade = true; return t }, ""},
		{"other os", manifest("v0.3.0", "linux", "amd64"), nil, "for linux/amd64, and this host is windows/amd64: use edgecore-v0.3.0-windows-amd64.zip"},
		{"other arch", manifest("v0.3.0", "windows", "arm64"), nil, "for windows/arm64"},
		{"other arch even with downgrade", manifest("v0.1.0", "windows", "arm64"), func(t Target) Target { t.AllowDowngrade = true; return t }, "for windows/arm64"},
		{"unknown installed", manifest("v0.3.0", "windows", "amd64"), func(t Target) Target { t.Installed = ""; return t }, "could not be told"},
		{"unknown installed allowed", manifest("v0.3.0", "windows", "amd64"), func(t Target) Target { t.Installed = ""; t.AllowDowngrade = true; return t }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := host
			if tc.target != nil {
				target = tc.target(host)
			}
			err := Check(*tc.m, target)
			var same *ErrSameVersion
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want == "same" && !errors.As(err, &same):
				t.Errorf("got %v, want ErrSameVersion", err)
			case tc.want != "" && tc.want != "same" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDigests(t *testing.T) {
	hexSum := strings.Repeat("ab", 32)
	for in, want := range map[string]string{
		"sha256:" + hexSum:                  hexSum,
		"SHA256:" + strings.ToUpper(hexSum): hexSum,
		"  " + hexSum + "\n":                hexSum,
		"sha512:" + hexSum:                  "error: uses sha512",
		"sha256:abc":                        "error: not a SHA-256",
		"":                                  "error: not a SHA-256",
	} {
		got, err := ParseDigest(in)
		if strings.HasPrefix(want, "error: ") {
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(want, "error: ")) {
				t.Errorf("ParseDigest(%q) = %q, %v", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseDigest(%q) = %q, %v", in, got, err)
		}
	}
	sums := []byte(hexSum + "  edgecore-v0.2.0-windows-amd64.zip\r\n" + strings.Repeat("cd", 32) + " *edgecore v0.3.0.zip\n")
	if got, err := SumFor(sums, "edgecore v0.3.0.zip"); err != nil || got != strings.Repeat("cd", 32) {
		t.Errorf("SumFor with a binary-mode name with a space: %q, %v", got, err)
	}
	if _, err := SumFor(sums, "edgecore-v0.4.0-windows-amd64.zip"); err == nil || !strings.Contains(err.Error(), "does not list edgecore-v0.4.0-windows-amd64.zip") {
		t.Errorf("SumFor of an unlisted package: %v", err)
	}
}

// writeDeclared writes a zip whose directory declares, for each name, the
// uncompressed size given, while holding only a few stored bytes: what a
// zip bomb or a 2 GiB entry looks like to Open, without the disk it
// would take.
func writeDeclared(t *testing.T, sizes map[string]uint64) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "edgecore-v0.2.0-windows-amd64/" + n, Method: zip.Store,
			CompressedSize64: 1, UncompressedSize64: sizes[n]})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "edgecore-v0.2.0-windows-amd64.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRefusesEntriesThatWouldFillTheDisk(t *testing.T) {
	for name, tc := range map[string]struct {
		sizes map[string]uint64
		want  string
	}{
		"a 2 GiB entry": {map[string]uint64{"edgecore.exe": 2 << 30}, `entry "edgecore-v0.2.0-windows-amd64/edgecore.exe" is 2147483648 bytes uncompressed, more than the 268435456`},
		"entries together": {map[string]uint64{"a": 200 << 20, "b": 200 << 20, "c": 200 << 20},
			"more than 536870912 bytes uncompressed together"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeDeclared(t, tc.sizes)
			p, err := Open(path)
			if err == nil {
				p.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "could fill the disk") {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

func TestOpenRefusesAZipLargerThanAPackage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edgecore-v0.2.0-windows-amd64.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is what counts, not the content.
	if err := f.Truncate(MaxPackageBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "more than the 536870912 a release zip may be") {
		t.Errorf("Open = %v", err)
	}
}

func TestCopyAtMostStopsAtTheLimit(t *testing.T) {
	var out bytes.Buffer
	if n, err := copyAtMost(&out, strings.NewReader("12345"), 5); err != nil || n != 5 {
		t.Errorf("5 bytes within 5: %d, %v", n, err)
	}
	out.Reset()
	if _, err := copyAtMost(&out, strings.NewReader("123456"), 5); err == nil || out.Len() > 6 {
		t.Errorf("6 bytes within 5: %v, copied %d", err, out.Len())
	}
}

func TestCheckVersion(t *testing.T) {
	for v, want := range map[string]string{
		"v0.2.0": "", "v0.2.0-rc.1": "", " v0.2.0": "has spaces around it", "v0.2.0\t": "has spaces around it",
		`..\x`: "is not a semantic version", "v0.2.0/..": "is not a semantic version", "latest": "is not a semantic version",
	} {
		err := CheckVersion("--to", v)
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--to "))) {
			t.Errorf("CheckVersion(%q) = %v, want %q", v, err, want)
		}
	}
}

// A package may hold MaxEntries entries and not one more: the refusal
// names the count and the bound.
func TestOpenBoundsTheNumberOfEntries(t *testing.T) {
	for _, extra := range []int{0, 1} {
		files := goodFiles()
		// The manifest and SHA256SUMS are entries too.
		for i := len(files) + 2; i < MaxEntries+extra; i++ {
			files[fmt.Sprintf("licenses/module%04d.txt", i)] = []byte("MIT")
		}
		p, err := Open(writePackage(t, pkgSpec{manifest: manifest("v0.2.0", "windows", "amd64"), files: files}))
		if extra == 0 {
			if err != nil {
				t.Fatalf("a package of exactly %d entries: %v", MaxEntries, err)
			}
			p.Close()
			continue
		}
		if err == nil {
			p.Close()
			t.Fatalf("a package of %d entries was accepted", MaxEntries+1)
		}
		if want := fmt.Sprintf("it holds %d entries, more than the %d (MaxEntries)", MaxEntries+1, MaxEntries); !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}
