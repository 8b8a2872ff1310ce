package experiment

import (
	"github.com/ccsets/ccs/eval"
)

// Row is one method's results over seeds. Its summaries hold coverage and
// exclusion in percent (95.2), as the tables print them; PerSeed holds
// each seed's eval.Result, whose coverage and exclusion are fractions
// (0.952), as ccs evaluate -json writes them.
type Row struct {
	Method       string       `json:"method"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
	// PerSeed holds each seed's results, in seed order.
	PerSeed []eval.Result `json:"per_seed"`
	// Paper holds the paper's Table 1 figures for this row, if any.
	Paper *PaperRow `json:"paper,omitempty"`
	// ClassCoverage and ClassExclusion are measured on the class test
	// split (positives of the anchor's class), when the table has one.
	ClassCoverage  *eval.Summary `json:"class_coverage,omitempty"`
	ClassExclusion *eval.Summary `json:"class_exclusion,omitempty"`
	// Curve is the row's geometry recalibrated at each of CurveAlphas
	// (eval.Recalibrated) on the test split, over seeds: coverage against
	// α, and the inclusion–exclusion trade-off.
	Curve []CurvePoint `json:"alpha_curve,omitempty"`
}

// CurvePoint is a row at one recalibrated α, over seeds: coverage and
// exclusion in percent, LogVol/d; N is the calibration scores behind each
// threshold (the finite-sample band is [1−α, 1−α+1/(N+1)]).
type CurvePoint struct {
	Alpha        float64      `json:"alpha"`
	N            int          `json:"n"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
}

// CurveAlphas are the levels each row is recalibrated at.
var CurveAlphas = []float64{0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3}

// PaperRow is a row of the paper's table, in percent and LogVol/d.
type PaperRow struct {
	Coverage, Exclusion, LogVolPerDim float64
}

// Table is a reproduced table.
type Table struct {
	Title    string   `json:"title"`
	Config   string   `json:"config"`
	Rows     []Row    `json:"rows"`
	Warnings []string `json:"warnings,omitempty"`
	// Shapes, for the simulation, holds seed 0's sets and one anchor.
	Shapes *Shapes `json:"shapes,omitempty"`
}

// Row returns the row of the method named name.
func (t *Table) Row(name string) (Row, bool) {
	for _, r := range t.Rows {
		if r.Method == name {
			return r, true
		}
	}
	return Row{}, false
}

// rows summarises each method's results over seeds.
func rows(methods []Method, results [][]cellResult) []Row {
	var out []Row
	for m, method := range methods {
		var cov, exc, vol, ccov, cexc []float64
		var per []eval.Result
		for s := range results {
			r := results[s][m].Test
			per = append(per, r)
			cov = append(cov, 100*r.Coverage)
			exc = append(exc, 100*r.Exclusion)
			vol = append(vol, r.LogVolPerDim)
			if c := results[s][m].Class; c != nil {
				ccov = append(ccov, 100*c.Coverage)
				cexc = append(cexc, 100*c.Exclusion)
			}
		}
		row := Row{Method: method.Name, Coverage: eval.Summarize(cov),
			Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol), PerSeed: per, Paper: method.Paper,
			Curve: curve(results, m)}
		if ccov != nil {
			c, e := eval.Summarize(ccov), eval.Summarize(cexc)
			row.ClassCoverage, row.ClassExclusion = &c, &e
		}
		out = append(out, row)
	}
	return out
}

// curve summarises method m's recalibrated points over seeds, at the α
// every seed reached.
func curve(results [][]cellResult, m int) []CurvePoint {
	var pts []CurvePoint
	for i, p := range results[0][m].Curve {
		var cov, exc, vol []float64
		for s := range results {
			c := results[s][m].Curve
			if i >= len(c) || c[i].Alpha != p.Alpha {
				return pts
			}
			cov, exc, vol = append(cov, 100*c[i].Coverage), append(exc, 100*c[i].Exclusion), append(vol, c[i].LogVolPerDim)
		}
		pts = append(pts, CurvePoint{Alpha: p.Alpha, N: p.N, Coverage: eval.Summarize(cov),
			Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol)})
	}
	return pts
}
