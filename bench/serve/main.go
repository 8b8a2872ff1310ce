// Command serve writes the inputs of bench/serve.sh: two fitted sets at
// d = 128 (an ℓ2 ball and a generalized ball, each with a 256-row OOD
// reference pool), a collection of 10⁶ random embeddings, and request
// bodies for the load test. The thresholds keep about 0.1% of the
// collection around the origin.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

func main() {
	out := flag.String("out", "bench-serve", "output directory")
	n := flag.Int("n", 1_000_000, "collection size")
	flag.Parse()
	const d = 128
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]float32, *n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	if err := bundle.WriteNPZ(filepath.Join(*out, "db.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(rows, *n, d)}); err != nil {
		log.Fatal(err)
	}
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 0.5+rng.Float64(), 1.5+rng.Float64()
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		log.Fatal(err)
	}
	for name, g := range map[string]geometry.Geometry{"ball": geometry.Ball{D: d}, "genball": gb} {
		sc := g.Scores(make([]float64, 100000), rows[:100000*d])
		slices.Sort(sc)
		s := &conformal.Set{Geometry: g, Threshold: sc[100], Alpha: 0.05,
			Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 999, Rank: 950},
			Reference:   &conformal.Reference{Source: "bench: collection rows", N: 256, Rows: rows[:256*d]}}
		if err := s.Save(filepath.Join(*out, name+".json")); err != nil {
			log.Fatal(err)
		}
	}
	vec := func(i int) string {
		var b strings.Builder
		b.WriteByte('[')
		for j, v := range rows[i*d : (i+1)*d] {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%v", v)
		}
		b.WriteByte(']')
		return b.String()
	}
	zero := "[" + strings.TrimSuffix(strings.Repeat("0, ", d), ", ") + "]"
	bodies := map[string]string{
		"score.json":    fmt.Sprintf(`{"anchor": %s, "points": [%s]}`, zero, vec(7)),
		"ood.json":      fmt.Sprintf(`{"points": [%s]}`, vec(300)),
		"retrieve.json": fmt.Sprintf(`{"anchor": %s, "collection": "db", "limit": 100}`, zero),
	}
	for name, body := range bodies {
		if err := os.WriteFile(filepath.Join(*out, name), []byte(body), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
