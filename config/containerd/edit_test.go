package containerd

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regenerate with: go test ./config/containerd/ -run TestGoldenDefaults -update
var update = flag.Bool("update", false, "rewrite the golden diffs in testdata/")

// The defaults below are `containerd.exe config default` of the released
// versions, built for windows/amd64 and run under Wine, where %ProgramFiles%
// is C:\Program Files as on a real host.
var (
	programFiles = Dirs{BinDir: `C:\Program Files\containerd\cni\bin`, ConfDir: `C:\Program Files\containerd\cni\conf`}
	elsewhere    = Dirs{BinDir: `C:\k\cni\bin`, ConfDir: `C:\k\cni\config`}
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGoldenDefaults(t *testing.T) {
	for _, tc := range []struct {
		file    string
		runtime Runtime
		version int
		binKey  string
	}{
		{"containerd-1.7.25-windows-default.toml", Runtime{1, 7, 25}, Version17, KeyBinDir},
		{"containerd-2.0.14-windows-default.toml", Runtime{2, 0, 14}, Version2x, KeyBinDir},
		{"containerd-2.2.1-windows-default.toml", Runtime{2, 2, 1}, Version2x, KeyBinDirs},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readTestdata(t, tc.file)
			s, err := Read(data)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version != tc.version || s.BinKey != tc.binKey || len(s.BinDirs) != 1 ||
				s.BinDirs[0] != programFiles.BinDir || s.ConfDir != programFiles.ConfDir {
				t.Fatalf("Read: %+v", s)
			}

			// The defaults already point where cni-config writes by default.
			out, changes, err := Edit(data, EditOptions{GOOS: "windows", Want: programFiles, Default: programFiles, Runtime: tc.runtime})
			if err != nil || len(changes) != 0 || !bytes.Equal(out, data) {
				t.Fatalf("defaults: changes %v, err %v", changes, err)
			}
			// Paths compare as Windows compares them.
			same := Dirs{BinDir: `c:/program files/containerd/cni/bin/`, ConfDir: `C:\PROGRAM FILES\containerd\cni\conf`}
			if _, changes, err := Edit(data, EditOptions{GOOS: "windows", Want: same, Default: programFiles, Runtime: tc.runtime}); err != nil || len(changes) != 0 {
				t.Fatalf("same paths written differently: changes %v, err %v", changes, err)
			}

			out, changes, err = Edit(data, EditOptions{GOOS: "windows", Want: elsewhere, Default: programFiles, Runtime: tc.runtime})
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != 2 {
				t.Errorf("changes: %v", changes)
			}
			s, err = Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if s.ConfDir != elsewhere.ConfDir || s.BinDirs[0] != elsewhere.BinDir || s.BinKey != tc.binKey {
				t.Errorf("read back: %+v", s)
			}
			diff := Diff("config.toml", data, out)
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.file, ".toml")+".diff")
			if *update {
				if err := os.WriteFile(golden, []byte(diff), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := string(readTestdata(t, filepath.Base(golden))); diff != want {
				t.Errorf("diff differs from %s\n--- got\n%s--- want\n%s", golden, diff, want)
			}
			// Two lines change; every other line is as it was.
			plus, minus := 0, 0
			for _, l := range strings.Split(diff, "\n")[2:] {
				switch {
				case strings.HasPrefix(l, "+"):
					plus++
				case strings.HasPrefix(l, "-"):
					minus++
				}
			}
			if plus != 2 || minus != 2 {
				t.Errorf("want two changed lines and the two file headers:\n%s", diff)
			}

			// A file saved by PowerShell's Out-File has CRLF line ends: the
			// edit keeps them and changes the same two lines.
			crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			outCRLF, _, err := Edit(crlf, EditOptions{GOOS: "windows", Want: elsewhere, Default: programFiles, Runtime: tc.runtime})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(outCRLF, bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))) {
				t.Errorf("CRLF file edited differently:\n%s", Diff("config.toml", crlf, outCRLF))
			}
		})
	}
}

func TestEditAddsKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		runtime Runtime
		want    string
	}{
		{
			name: "no CNI table: a new one at the end",
			in:   "version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.9\"\n",
			want: "version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.9\"\n" +
				"\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"C:\\\\k\\\\cni\\\\config\"\n  bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n",
		},
		{
			name: "no final newline",
			in:   "version = 2",
			want: "version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"C:\\\\k\\\\cni\\\\config\"\n  bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n",
		},
		{
			name: "empty table header: keys under it",
			in:   "version = 2\n  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n\n[debug]\n  level = \"info\"\n",
			want: "version = 2\n  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n    conf_dir = \"C:\\\\k\\\\cni\\\\config\"\n    bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n\n[debug]\n  level = \"info\"\n",
		},
		{
			name: "dotted keys in the parent table: a dotted sibling, comments kept",
			in: "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  # pods' networks\n  cni.conf_dir = \"C:\\\\k\\\\cni\\\\config\" # keep\n" +
				"  cni.max_conf_num = 1\n[debug]\n",
			want: "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  # pods' networks\n  cni.conf_dir = \"C:\\\\k\\\\cni\\\\config\" # keep\n" +
				"  cni.max_conf_num = 1\n  cni.bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n[debug]\n",
		},
		{
			name:    "version 3 under 2.1 and later: bin_dirs, literal strings",
			in:      "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n",
			runtime: Runtime{2, 1, 0},
			want:    "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n  bin_dirs = ['C:\\k\\cni\\bin']\n",
		},
		{
			name:    "version 3 under 2.0: bin_dir, which 2.0 reads",
			in:      "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n",
			runtime: Runtime{2, 0, 5},
			want:    "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n  bin_dir = 'C:\\k\\cni\\bin'\n",
		},
		{
			name: "version 3, containerd unknown: bin_dir, which every 2.x reads",
			in:   "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n",
			want: "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = 'C:\\k\\cni\\config'\n  bin_dir = 'C:\\k\\cni\\bin'\n",
		},
		{
			name: "bin_dirs without ours: ours first, the others kept",
			in:   "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = [\n    'D:\\rke2\\bin', # rke2's\n  ]\n  conf_dir = 'C:\\k\\cni\\config'\n",
			want: "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['C:\\k\\cni\\bin', 'D:\\rke2\\bin']\n  conf_dir = 'C:\\k\\cni\\config'\n",
		},
		{
			name: "version 1: plugins.cri",
			in:   "[plugins.cri.cni]\n  bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n  conf_dir = \"C:\\\\old\"\n",
			want: "[plugins.cri.cni]\n  bin_dir = \"C:\\\\k\\\\cni\\\\bin\"\n  conf_dir = \"C:\\\\k\\\\cni\\\\config\"\n",
		},
		{
			name: "a literal string that cannot hold the path",
			in:   "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = 'C:\\k\\cni\\config'\n  bin_dir = 'C:\\x'\n",
			want: "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = 'C:\\k\\cni\\config'\n  bin_dir = \"C:\\\\k's\\\\bin\"\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := elsewhere
			if strings.Contains(tc.name, "literal string that cannot") {
				want.BinDir = `C:\k's\bin`
			}
			out, changes, err := Edit([]byte(tc.in), EditOptions{GOOS: "windows", Want: want, Default: programFiles, Runtime: tc.runtime})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got\n%s\nwant\n%s\ndiff:\n%s", out, tc.want, Diff("config.toml", []byte(tc.want), out))
			}
			if len(changes) == 0 {
				t.Error("no changes reported")
			}
			// Running it again changes nothing.
			again, changes, err := Edit(out, EditOptions{GOOS: "windows", Want: want, Default: programFiles, Runtime: tc.runtime})
			if err != nil || len(changes) != 0 || !bytes.Equal(again, out) {
				t.Errorf("second run: changes %v, err %v", changes, err)
			}
		})
	}
}

func TestEditRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		runtime Runtime
		want    string // the whole message
	}{
		{"version 3 under containerd 1.7",
			"version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dir = 'C:\\x'\n", Runtime{1, 7, 25},
			`:1: version: is 3, containerd 2.x's format, which the installed containerd v1.7.25 refuses to start with; ` + fixRegenerate},
		{"unknown version", "version = 7\n", Runtime{},
			`:1: version: is 7; containerd 1.x writes 2 and 2.x writes 3, and no other version is known; ` + fixRegenerate},
		{"inline table",
			"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  cni = { bin_dir = \"C:\\\\x\" }\n", Runtime{},
			`:3: plugins."io.containerd.grpc.v1.cri".cni: is written as an inline table or value, so the CNI settings in plugins."io.containerd.grpc.v1.cri".cni cannot be edited in place; write it as a [plugins."io.containerd.grpc.v1.cri".cni] section, or ` + fixRegenerate},
		{"bin_dir not a string",
			"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 1\n", Runtime{},
			`:3: plugins."io.containerd.grpc.v1.cri".cni.bin_dir: is not a string; write it as a quoted path, e.g. bin_dir = 'C:\Program Files\containerd\cni\conf'`},
		{"bin_dirs not a list",
			"version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = 'C:\\x'\n", Runtime{},
			`:3: plugins."io.containerd.cri.v1.runtime".cni.bin_dirs: is not a list of strings; write it as a list of quoted paths, e.g. bin_dirs = ['C:\Program Files\containerd\cni\bin']`},
		{"bin_dir and bin_dirs together",
			"version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dir = 'C:\\x'\n  bin_dirs = ['C:\\y']\n", Runtime{},
			`:3: plugins."io.containerd.cri.v1.runtime".cni.bin_dir: is set together with bin_dirs, which containerd 2.1 and later refuse; delete the bin_dir line and list the directories in bin_dirs`},
		{"invalid TOML", "version = 2\n[plugins\n", Runtime{}, ":2: not valid TOML: "},
		{"key defined twice", "version = 2\nversion = 2\n", Runtime{}, "not valid TOML: toml: key version is already defined; "},
		{"UTF-16", "\xff\xfev\x00e\x00", Runtime{},
			"the file is UTF-16 (Windows PowerShell 5.1's > writes that), which containerd cannot read; save it as ASCII (Get-Content config.toml | Set-Content -Encoding ascii config.toml), or " + fixRegenerate},
		{"byte-order mark", "\xef\xbb\xbfversion = 2\n", Runtime{},
			"the file starts with a UTF-8 byte-order mark, which containerd cannot read; save it as ASCII (Set-Content -Encoding ascii), or " + fixRegenerate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Edit([]byte(tc.in), EditOptions{GOOS: "windows", Want: elsewhere, Default: programFiles, Runtime: tc.runtime})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseVersionOutput(t *testing.T) {
	for out, want := range map[string]Runtime{
		"containerd github.com/containerd/containerd v1.7.25 bcc810d6b9066471b0b6fa75f557a15a1cbf31bb\r\n": {1, 7, 25},
		"containerd github.com/containerd/containerd/v2 v2.0.0 207ad711eabd375a01713109a8a197d197ff6542":   {2, 0, 0},
		"containerd github.com/containerd/containerd/v2 v2.1.0-rc.1 abc":                                   {2, 1, 0},
		"containerd github.com/containerd/containerd/v2 2.0.14+unknown ":                                   {2, 0, 14},
	} {
		got, err := ParseVersionOutput(out)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v", out, got, err)
		}
	}
	if _, err := ParseVersionOutput("containerd: not found"); err == nil {
		t.Error("no version: no error")
	}
}

func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n"
	b := strings.Replace(strings.Replace(a, "3\n", "three\n", 1), "15\n", "15\nfifteen and a half\n", 1)
	want := "--- f\n+++ f (edited)\n" +
		"@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n" +
		"@@ -13,4 +13,5 @@\n 13\n 14\n 15\n+fifteen and a half\n 16\n"
	if got := Diff("f", []byte(a), []byte(b)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := Diff("f", []byte(a), []byte(a)); got != "" {
		t.Errorf("equal files: %q", got)
	}
}
