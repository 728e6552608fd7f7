// The slip's print button: the browser prints the sheet alone (the print stylesheet hides the rest).
document.getElementById("print").addEventListener("click", function () {
  window.print();
});
