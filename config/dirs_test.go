package config

import (
	"reflect"
	"testing"
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
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("directories\n got %v\nwant %v", got, want)
	}
}
