// Export: every table as CSV and every chart as SVG, from the page.
