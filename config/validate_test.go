package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// Path fields refuse what no lexical form can settle: an 8.3 short name,
// an alternate data stream, a device path or device name, a name Win32
// trims to nothing. Each error names the field, the value and the fix.
func TestPathFieldsRefuseNamesOnlyTheDiskCouldSettle(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(c *v1alpha2.EdgeCoreConfig)
		want []string
	}{
		{"short name", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.RootDirectory = `C:\PROGRA~1\kubelet` },
			[]string{"modules.edged.rootDirectory", `C:\\PROGRA~1\\kubelet`, `"PROGRA~1"`, "8.3 short name", "fix: write the long name"}},
		{"short name of Windows", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.TailoredKubeletConfig.PodLogsDir = `c:\window~1\Logs\pods`
		}, []string{"modules.edged.tailoredKubeletConfig.podLogsDir", `"window~1"`, "8.3 short name"}},
		{"alternate data stream", func(c *v1alpha2.EdgeCoreConfig) { c.DataBase.DataSource = `C:\var\lib\kubeedge\edgecore.db:hidden` },
			[]string{"database.dataSource", `edgecore.db:hidden`, "alternate data stream", `fix: rename it, for example to C:\var\lib\kubeedge\edgecore.db`}},
		{"a folder's index stream", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.RootDirectory = `C:\Windows::$INDEX_ALLOCATION\System32\kl`
		}, []string{"modules.edged.rootDirectory", "alternate data stream"}},
		{"device path", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.RootDirectory = `\\.\PhysicalDrive0` },
			[]string{"modules.edged.rootDirectory", `\\\\.\\PhysicalDrive0`, "device path", "fix: write the path from its drive letter"}},
		{"volume GUID path", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.EdgeHub.TLSCAFile = `\\?\Volume{0b1a6a3e-0000-0000-0000-100000000000}\ca.crt`
		}, []string{"modules.edgeHub.tlsCaFile", "device path"}},
		{"device name with a superscript", func(c *v1alpha2.EdgeCoreConfig) {
			c.Modules.Edged.TailoredKubeletConfig.StaticPodPath = `C:\etc\kubeedge\COM¹`
		}, []string{"staticPodPath", "COM¹ is a device name"}},
		{"name of dots", func(c *v1alpha2.EdgeCoreConfig) { c.Modules.Edged.RootDirectory = `C:\var\...\kubelet` },
			[]string{"modules.edged.rootDirectory", `"..."`, "leaves nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Sample(KindDefault, testHost(Windows))
			if err != nil {
				t.Fatal(err)
			}
			tc.set(c)
			Normalize(c, Windows)
			errs := validateAll(c, Windows)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), errs)
			}
			got := errs[0].Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error %q lacks %q", got, w)
				}
			}
		})
	}
}

// Spellings Windows reads as one path are written in that one form when
// the configuration loads, and the rewrite is reported.
func TestNormalizeWritesTheCanonicalFormOfEverySpelling(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.RootDirectory = `\\?\C:\var\lib\kubelet.`
	c.Modules.Edged.TailoredKubeletConfig.PodLogsDir = `C:\var\log \pods `
	c.DataBase.DataSource = `//?/UNC/fileserver/share/edgecore.db`
	got := Normalize(c, Windows)
	want := []Rewrite{
		{Field: "database.dataSource", From: `//?/UNC/fileserver/share/edgecore.db`, To: `\\fileserver\share\edgecore.db`},
		{Field: "modules.edged.rootDirectory", From: `\\?\C:\var\lib\kubelet.`, To: `C:\var\lib\kubelet`},
		{Field: "modules.edged.tailoredKubeletConfig.podLogsDir", From: `C:\var\log \pods `, To: `C:\var\log\pods`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rewrites\n got %v\nwant %v", got, want)
	}
	if errs := validateAll(c, Windows); len(errs) > 0 {
		t.Errorf("the canonical paths are refused: %v", errs)
	}
}
