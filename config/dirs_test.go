package config

import (
	"reflect"
	"testing"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

func TestDirectoriesOfWindowsSample(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.EdgeHub.Enable = true
	got := map[string]string{}
	for _, d := range Directories(c, Windows) {
		got[d.Field] = d.Path
	}
	want := map[string]string{
		"database.dataSource":                               `C:\var\lib\kubeedge`,
		"modules.edgeHub.tlsCaFile":                         `C:\etc\kubeedge\ca`,
		"modules.edgeHub.tlsCertFile":                       `C:\etc\kubeedge\certs`,
		"modules.edged.rootDirectory":                       `C:\var\lib\kubelet`,
		"modules.edged.tailoredKubeletConfig.podLogsDir":    `C:\var\log\pods`,
		"modules.edged.tailoredKubeletConfig.staticPodPath": `C:\etc\kubeedge\manifests`,
		// The kubelet runs the flexvolume drivers it finds there.
		"modules.edged.tailoredKubeletConfig.volumePluginDir": `C:\var\lib\kubelet\volumeplugins`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("directories\n got %v\nwant %v", got, want)
	}
}

// A directory two fields spell differently is listed once, under the
// first field: Directories compares as ospath.Same does.
func TestDirectoriesListADirectoryOnce(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.EdgeHub.Enable = true
	c.Modules.EdgeHub.TLSCertFile = `c:/etc/kubeedge/certs./server.crt`
	c.Modules.EdgeHub.TLSPrivateKeyFile = `\\?\C:\ETC\kubeedge\certs\server.key`
	var fields []string
	for _, d := range Directories(c, Windows) {
		if ospath.Same(Windows, d.Path, `C:\etc\kubeedge\certs`) {
			fields = append(fields, d.Field)
		}
	}
	if want := []string{"modules.edgeHub.tlsCertFile"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("C:\\etc\\kubeedge\\certs listed for %v, want %v", fields, want)
	}
}
