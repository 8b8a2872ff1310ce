package main

import (
	"strings"
	"testing"
)

// A headerless 2-D semicolon table of decimal commas (UMAP's x;y from a
// European Excel): sniffSeparator's 8db3eea fix ties at 2 numbers.
func TestReview41TwoColumnDecimalCommaRead(t *testing.T) {
	p := reproWrite(t, "umap.csv", "-0,80;1,32\n0,50;-0,25\n1,00;2,00\n")
	e, note, _, err := readTextEmbeddings(p, "")
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if e.D != 2 || e.Rows[0] != -0.8 {
		t.Errorf("D=%d rows %v (%s), want D=2, -0.8 first", e.D, e.Rows, note)
	}
}

// otherColumn with no column named (-labels emb.csv) matches a header's
// blank name: "" == TrimSpace(""), so pandas' unnamed index is claimed
// as -labels' column.
func TestReview41OtherColumnBlankName(t *testing.T) {
	p := reproWrite(t, "emb.csv", ",x,y,label\nAAAC,0.1,0.2,B\nAAAG,0.3,0.4,T\nAACT,0.5,0.6,B\n")
	_, note, _, err := readTextEmbeddings(p, "", otherColumn{flag: "-labels", names: []string{"labels", "label"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(note, `"" (-labels)`) {
		t.Errorf("the unnamed index attributed to -labels: %s", note)
	}
}
