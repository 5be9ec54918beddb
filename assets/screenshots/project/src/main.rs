mod inventory;

use inventory::Inventory;

fn main() {
    let mut stock = Inventory::default();
    stock.add("bolt", 120);
    stock.add("nut", 80);
    stock.remove("bolt", 20);
    println!("{stock}");
}
